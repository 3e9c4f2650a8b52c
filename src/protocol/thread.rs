//! Thread resources: the `Thread` object and the thread methods' params and results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{ApprovalsReviewer, AskForApproval, SandboxMode, SandboxPolicy};
use super::turn::Turn;

/// A thread as clients see it. Optional fields are written as explicit `null`s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    pub id: String,
    pub session_id: String,
    /// The first user message, else "".
    pub preview: String,
    pub ephemeral: bool,
    pub model_provider: String,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub recency_at: Option<i64>,
    pub status: ThreadStatus,
    pub path: Option<String>,
    pub cwd: String,
    pub cli_version: String,
    pub source: String,
    pub originator: Option<String>,
    pub name: Option<String>,
    pub forked_from_id: Option<String>,
    pub parent_thread_id: Option<String>,
    pub agent_nickname: Option<String>,
    pub agent_role: Option<String>,
    pub git_info: Option<Value>,
    pub project_id: Option<String>,
    pub section: Option<Value>,
    pub section_entered_at: Option<i64>,
    pub thread_source: Option<Value>,
    pub history_mode: String,
    pub turns: Vec<Turn>,
}

/// `{"type":"idle"}`, `{"type":"active","activeFlags":[…]}`, …
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadStatus {
    NotLoaded,
    Idle,
    SystemError,
    #[serde(rename_all = "camelCase")]
    Active {
        active_flags: Vec<ThreadActiveFlag>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadActiveFlag {
    WaitingOnApproval,
    WaitingOnUserInput,
}

/// `thread/start`: every field optional.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub model_provider: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    #[serde(default)]
    pub sandbox: Option<SandboxMode>,
    /// config.toml overrides as an object of dotted keys or nested tables.
    #[serde(default)]
    pub config: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub base_instructions: Option<String>,
    #[serde(default)]
    pub developer_instructions: Option<String>,
    #[serde(default)]
    pub ephemeral: Option<bool>,
    #[serde(default)]
    pub service_name: Option<String>,
    /// Experimental: client-implemented tools offered to the model.
    #[serde(default)]
    pub dynamic_tools: Option<Vec<Value>>,
}

/// The shared result of `thread/start`, `thread/resume` and `thread/fork`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartResponse {
    pub thread: Thread,
    pub model: String,
    pub model_provider: String,
    pub service_tier: Option<String>,
    pub cwd: String,
    pub approval_policy: AskForApproval,
    pub approvals_reviewer: ApprovalsReviewer,
    pub sandbox: SandboxPolicy,
    pub reasoning_effort: Option<String>,
    pub instruction_sources: Vec<String>,
    pub disabled_plugin_ids: Vec<String>,
}
