//! `skills/*`: the skills found on disk (folders holding a `SKILL.md` with `name` and
//! `description` front matter).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `skills/list` params.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsListParams {
    /// Working directories to list for; empty or absent means the daemon's own.
    #[serde(default)]
    pub cwds: Option<Vec<String>>,
    /// Accepted for compatibility: every listing reads the disk afresh.
    #[serde(default)]
    pub force_reload: Option<bool>,
}

/// `skills/list` result: one entry per requested working directory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SkillsListResponse {
    pub data: Vec<SkillsListEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SkillsListEntry {
    pub cwd: String,
    pub skills: Vec<SkillMetadata>,
    /// `SKILL.md` files that could not be read, each with the reason.
    pub errors: Vec<SkillErrorInfo>,
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillMetadata {
    pub name: String,
    pub description: String,
    /// `short-description` from the front matter's `metadata`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_description: Option<String>,
    /// Absolute path of the `SKILL.md` file.
    pub path: String,
    /// `user` (under the openturn home) or `repo` (in the project).
    pub scope: String,
    pub enabled: bool,
    /// Always `null`: openturn has no plugins.
    pub plugin_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillErrorInfo {
    pub path: String,
    pub message: String,
}

/// `skills/extraRoots/set` params: more folders to scan (as user skills) for this connection.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsExtraRootsSetParams {
    pub extra_roots: Vec<String>,
}

/// `skills/config/write` params: turn one skill on or off, chosen by exactly one of `path` or
/// `name`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsConfigWriteParams {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    pub enabled: bool,
}

/// `skills/config/write` result: whether the skill is on after the write.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsConfigWriteResponse {
    pub effective_enabled: bool,
}
