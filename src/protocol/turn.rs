//! Turn resources: `Turn`, `TurnError`, user input, and the turn methods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{ApprovalsReviewer, AskForApproval, SandboxPolicy};
use super::item::ThreadItem;
// Re-exported: user input is a turn method's param, and items echo it.
pub use super::user_input::UserInput;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub id: String,
    pub root_turn_id: Option<String>,
    pub items: Vec<ThreadItem>,
    /// `notLoaded`, `summary` or `full`.
    pub items_view: String,
    pub status: TurnStatus,
    pub error: Option<TurnError>,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    InProgress,
    Completed,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    pub message: String,
    /// A camelCase string (`contextWindowExceeded`, `other`, …) or a one-key object
    /// (`{"httpConnectionFailed":{"httpStatusCode":500}}`).
    pub codex_error_info: Option<Value>,
    pub additional_details: Option<String>,
    pub misalignment: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    pub thread_id: String,
    pub input: Vec<UserInput>,
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
    #[serde(default)]
    pub effort: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub client_user_message_id: Option<String>,
    #[serde(default)]
    pub collaboration_mode: Option<Value>,
    /// The thread's service tier from this turn on (`flex`, `fast`, …), sent upstream as
    /// `service_tier` (`fast` as `priority`).
    #[serde(default)]
    pub service_tier: Option<String>,
    /// The service tier of this turn only; later turns go back to the thread's.
    #[serde(default)]
    pub service_tier_for_turn: Option<String>,
    /// A label for what started the turn; accepted and ignored (it grants nothing).
    #[serde(default)]
    pub turn_trigger: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnStartResponse {
    pub turn: Turn,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    pub thread_id: String,
    pub expected_turn_id: String,
    pub input: Vec<UserInput>,
    #[serde(default)]
    pub client_user_message_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    pub turn_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EmptyResponse {}

/// `turn/plan/updated` params: the model's plan as it stands after an `update_plan` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanUpdatedNotification {
    pub thread_id: String,
    pub turn_id: String,
    /// Why the plan changed, when the model said.
    pub explanation: Option<String>,
    pub plan: Vec<TurnPlanStep>,
}

/// One step of a [`TurnPlanUpdatedNotification`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnPlanStep {
    pub step: String,
    pub status: TurnPlanStepStatus,
}

/// Where a plan step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnPlanStepStatus {
    Pending,
    InProgress,
    Completed,
}
