//! `permissionProfile/list`: the permission profiles a thread can run under. openturn's are the
//! three sandbox modes, named as the reference names its built-in profiles.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListParams {
    /// A `nextCursor` from an earlier page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size; the whole list when absent.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Accepted for compatibility: openturn has no per-project profiles.
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListResponse {
    pub data: Vec<PermissionProfileSummary>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionProfileSummary {
    pub id: String,
    pub description: Option<String>,
    pub allowed: bool,
}
