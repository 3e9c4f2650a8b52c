//! Per-thread settings that turns read and `turn/start` overrides change.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::client::ProviderInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    Untrusted,
    #[default]
    OnRequest,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    #[default]
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

/// How reasoning summaries reach the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningSummaryMode {
    /// Summary deltas and part boundaries are streamed as they arrive.
    #[default]
    Streaming,
    /// Partial deltas are ignored; each finished summary part (`reasoning_summary_text.done`) is
    /// shown whole, for the active reasoning item only, with a section break before index > 0.
    SequentialCutoff,
}

/// A client-implemented tool declared on `thread/start` (`dynamicTools`).
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicToolSpec {
    pub name: String,
    pub namespace: Option<String>,
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// What a thread's turns run with.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSettings {
    pub model: String,
    pub provider: ProviderInfo,
    pub cwd: PathBuf,
    pub base_instructions: String,
    pub developer_instructions: Option<String>,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: SandboxMode,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub show_raw_agent_reasoning: bool,
    /// The client's name, sent upstream as `originator`.
    pub originator: String,
    pub model_context_window: Option<i64>,
    /// `reasoning_summary_mode` in config.toml.
    pub reasoning_summary_mode: ReasoningSummaryMode,
    /// Plan mode (`collaborationMode: {"mode": "plan"}` on `turn/start`): `<proposed_plan>` blocks
    /// become a plan item.
    pub plan_mode: bool,
    pub dynamic_tools: Vec<DynamicToolSpec>,
}

#[cfg(test)]
impl ThreadSettings {
    /// Plain settings for unit tests.
    pub(crate) fn for_tests() -> ThreadSettings {
        ThreadSettings {
            model: "gpt-5".into(),
            provider: crate::client::ProviderInfo::openai(),
            cwd: "/".into(),
            base_instructions: String::new(),
            developer_instructions: None,
            approval_policy: ApprovalPolicy::default(),
            sandbox: SandboxMode::default(),
            reasoning_effort: None,
            reasoning_summary: None,
            show_raw_agent_reasoning: false,
            originator: String::new(),
            model_context_window: None,
            reasoning_summary_mode: ReasoningSummaryMode::default(),
            plan_mode: false,
            dynamic_tools: Vec::new(),
        }
    }
}

/// The instructions sent when the configuration gives none.
pub const DEFAULT_INSTRUCTIONS: &str = "You are openturn, a coding agent running in the user's \
editor. Be concise and precise. Use the tools you are given to inspect and change the workspace \
when that helps, and explain what you did.";
