//! `[skills] include_instructions`: whether requests name the skills on disk to the model.
//! (The `[cloud]` table's skills switch is the checker's: `check/cloud.rs`.)

use toml::Value;

use super::Config;

impl Config {
    /// `skills.include_instructions`: whether each request names the skills found on disk to
    /// the model (default true). Off, skills are still listed to clients and a skill the user
    /// attaches to a message is still sent.
    pub fn skills_include_instructions(&self) -> bool {
        self.table
            .get("skills")
            .and_then(|skills| skills.get("include_instructions"))
            .and_then(Value::as_bool)
            .unwrap_or(true)
    }
}
