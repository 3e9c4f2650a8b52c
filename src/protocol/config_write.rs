//! `config/value/write`, `config/batchWrite`, `configRequirements/read` and `hooks/list`:
//! changing the user's config.toml and reading what constrains it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a written value meets what is already at its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MergeStrategy {
    /// The value takes the key's place.
    Replace,
    /// An object is merged into an existing table key by key; anything else replaces.
    Upsert,
}

/// `config/value/write` params: one key.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigValueWriteParams {
    /// A dotted path (`features.goals`, `mcp_servers.docs.url`).
    pub key_path: String,
    /// The value; `null` removes the key.
    pub value: Value,
    pub merge_strategy: MergeStrategy,
    /// The file to write; only the user's config.toml may be written. Defaults to it.
    #[serde(default)]
    pub file_path: Option<String>,
    /// The version `config/read` reported; the write is refused when the file changed since.
    #[serde(default)]
    pub expected_version: Option<String>,
}

/// One edit of a `config/batchWrite`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEdit {
    pub key_path: String,
    pub value: Value,
    pub merge_strategy: MergeStrategy,
}

/// `config/batchWrite` params: every edit applies, in order, or none does.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigBatchWriteParams {
    pub edits: Vec<ConfigEdit>,
    #[serde(default)]
    pub file_path: Option<String>,
    #[serde(default)]
    pub expected_version: Option<String>,
    /// Accepted for compatibility: loaded threads keep the settings they started with, and
    /// new threads read the file as written.
    #[serde(default)]
    pub reload_user_config: Option<bool>,
}

/// Whether the written value is the one in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WriteStatus {
    Ok,
    /// Written, but a higher layer (a `-c` flag) sets the key.
    OkOverridden,
}

/// A layer and its version, as `config/read` names them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConfigLayerMetadata {
    pub name: Value,
    pub version: String,
}

/// What overrides a written key.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverriddenMetadata {
    pub message: String,
    pub overriding_layer: ConfigLayerMetadata,
    /// The value in effect (secrets redacted).
    pub effective_value: Value,
}

/// The result of `config/value/write` and `config/batchWrite`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWriteResponse {
    pub status: WriteStatus,
    /// The version of the file as written, for the next `expectedVersion`.
    pub version: String,
    /// The file written.
    pub file_path: String,
    pub overridden_metadata: Option<OverriddenMetadata>,
}

/// `configRequirements/read` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRequirementsReadResponse {
    pub supports_independent_speed_modes: Option<bool>,
    /// `null`: openturn reads no managed requirements (no requirements.toml, no MDM).
    pub requirements: Option<Value>,
}

/// `hooks/list` params.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HooksListParams {
    /// Working directories to list for; empty means the daemon's own.
    #[serde(default)]
    pub cwds: Vec<String>,
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `hooks/list` result: one entry per working directory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HooksListResponse {
    pub data: Vec<HooksListEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HooksListEntry {
    pub cwd: String,
    /// Always empty: openturn runs no lifecycle hooks.
    pub hooks: Vec<Value>,
    pub warnings: Vec<String>,
    pub errors: Vec<Value>,
}

/// `experimentalFeature/list` params.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// Accepted for compatibility: flags are the daemon's, not a thread's.
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// One feature flag openturn acts on.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeature {
    /// The key in config.toml's `[features]` and of `--enable`/`--disable`.
    pub name: String,
    /// `beta`, `underDevelopment` or `stable`.
    pub stage: String,
    /// Shown for beta flags only, as the reference does; `null` otherwise.
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub announcement: Option<String>,
    pub enabled: bool,
    pub default_enabled: bool,
}

/// `experimentalFeature/list` result: one page.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListResponse {
    pub data: Vec<ExperimentalFeature>,
    pub next_cursor: Option<String>,
}

/// `experimentalFeature/enablement/set` params and result: flags by name, on or off. The
/// result holds the ones that were set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ExperimentalFeatureEnablement {
    pub enablement: std::collections::BTreeMap<String, bool>,
}
