//! `thread/settings/update`, `turn/settings/update` and `thread/settings/updated`: changing a
//! live thread's settings (experimental API).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::common::{ApprovalsReviewer, AskForApproval, SandboxPolicy};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsUpdateParams {
    pub thread_id: String,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicy>,
    #[serde(default)]
    pub model: Option<String>,
    /// Absent leaves the tier; `null` clears it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>")]
    pub service_tier: Option<Option<String>>,
    #[serde(default)]
    pub effort: Option<String>,
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// Accepted for compatibility; openturn has no plugins, environments, permission
    /// profiles by name or personalities to change.
    #[serde(default)]
    pub disabled_plugin_ids: Option<Vec<String>>,
    #[serde(default)]
    pub environments: Option<Value>,
    #[serde(default)]
    pub permissions: Option<String>,
    #[serde(default)]
    pub multi_agent_mode: Option<Value>,
    #[serde(default)]
    pub personality: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningSummary {
    Auto,
    Concise,
    Detailed,
    None,
}

impl ReasoningSummary {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningSummary::Auto => "auto",
            ReasoningSummary::Concise => "concise",
            ReasoningSummary::Detailed => "detailed",
            ReasoningSummary::None => "none",
        }
    }
}

/// A collaboration mode: `plan` or `default`, with what it runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationMode {
    pub mode: ModeKind,
    pub settings: CollaborationSettings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeKind {
    Plan,
    Default,
}

/// The mode's settings; snake_case on the wire, as the reference spells them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationSettings {
    pub model: String,
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    #[serde(default)]
    pub developer_instructions: Option<String>,
}

/// Experimental changes for one running turn; unknown fields are refused, not ignored.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnSettingsUpdateParams {
    pub thread_id: String,
    pub turn_id: String,
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    #[serde(default)]
    pub environments: Option<Value>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub effort: Option<String>,
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
    /// Absent leaves the tier; `null` clears it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>")]
    pub service_tier: Option<Option<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSettingsUpdateResponse {
    pub status: TurnSettingsUpdateStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnSettingsUpdateStatus {
    Applied,
    TargetUnavailable,
}

/// `thread/settings/updated`: the thread's settings after a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsUpdatedNotification {
    pub thread_id: String,
    pub thread_settings: ThreadSettingsSnapshot,
}

/// A thread's settings as `thread/settings/updated` shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsSnapshot {
    pub disabled_plugin_ids: Vec<String>,
    pub cwd: String,
    pub approval_policy: AskForApproval,
    pub approvals_reviewer: ApprovalsReviewer,
    pub sandbox_policy: SandboxPolicy,
    pub active_permission_profile: Option<Value>,
    pub model: String,
    pub model_provider: String,
    pub service_tier: Option<String>,
    pub effort: Option<String>,
    pub summary: Option<String>,
    pub collaboration_mode: CollaborationMode,
    pub personality: Option<Value>,
}

/// A field that is present (even as `null`) reads as `Some(value)`; `#[serde(default)]` makes
/// an absent one `None`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}
