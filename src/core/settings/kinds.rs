//! What settings are made of — the approval and sandbox policies, how reasoning summaries are
//! shown, a client's tool declaration — and the defaults used when nothing says otherwise.

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DynamicToolSpec {
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    pub description: String,
    pub input_schema: serde_json::Value,
    /// `deferLoading`: left out of the request for a model offered `tool_search`, which finds
    /// it instead (only a tool inside a namespace may be deferred).
    #[serde(default)]
    pub defer_loading: bool,
}

/// The usable context window of a model the configuration says nothing about: 95% of 272000,
/// the rest left for the model's own overhead (docs/PROTOCOL.md §10).
pub const DEFAULT_CONTEXT_WINDOW: i64 = 272_000 * 95 / 100;

/// The share of the context window a request may fill before compaction runs, by default: the
/// rest is room for the model's answer and for the estimate being off.
pub const AUTO_COMPACT_PERCENT: i64 = 80;

/// `project_doc_max_bytes` when config.toml does not say: how much of the project's `AGENTS.md`
/// files the context (`context.rs`) includes.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: usize = 32 * 1024;

/// The instructions sent when the configuration gives none.
pub const DEFAULT_INSTRUCTIONS: &str = include_str!("../base_instructions.md");
