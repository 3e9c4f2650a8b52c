//! The `[cloud]` table: the reference's `cloud.skills.enabled` switch for skills served by its
//! cloud account. openturn has no cloud skills, so `false` (what the reference's own side
//! threads send) says what openturn does anyway and is accepted silently, while `true` asks for
//! something openturn cannot give and is a warning, never a silent no-op.

use toml::{Table, Value};

use super::source::ConfigSource;

/// The warning for `cloud.skills.enabled = true` in `table`, naming where it came from.
pub(super) fn cloud_skills_asked(table: &Table, source: &ConfigSource) -> Option<String> {
    let enabled = table
        .get("cloud")
        .and_then(|cloud| cloud.get("skills"))
        .and_then(|skills| skills.get("enabled"))
        .and_then(Value::as_bool);
    (enabled == Some(true)).then(|| {
        format!(
            "`cloud.skills.enabled = true` in {source} asks for cloud skills, which openturn \
             does not have; only the skills on this machine are offered"
        )
    })
}
