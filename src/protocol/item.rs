//! `ThreadItem`: the items of a turn as clients see them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::user_input::UserInput;

/// An item plus the timing fields every item carries (written as `null` when unknown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItem {
    #[serde(flatten)]
    pub details: ThreadItemDetails,
    pub started_at_ms: Option<i64>,
    pub completed_at_ms: Option<i64>,
}

/// The item kinds of the core subset, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItemDetails {
    #[serde(rename_all = "camelCase")]
    UserMessage {
        id: String,
        content: Vec<UserInput>,
        client_id: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        id: String,
        text: String,
        /// `commentary`, `partial_answer` or `final_answer`.
        phase: Option<String>,
        moderation: Option<Value>,
        memory_citation: Option<Value>,
        delivery: Option<Value>,
        questions: Option<Value>,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        content: Vec<String>,
    },
    /// Plan mode only; id `<turnId>-plan`.
    Plan { id: String, text: String },
    /// A shell command the model ran.
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        /// The tool call's `call_id`.
        id: String,
        /// The display string actually run, e.g. `/bin/bash -lc 'echo hi'`.
        command: String,
        cwd: String,
        process_id: Option<String>,
        /// `agent`, `userShell`, `unifiedExecStartup` or `unifiedExecInteraction`.
        source: String,
        /// `inProgress`, `completed`, `failed` or `declined`.
        status: String,
        command_actions: Vec<Value>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<i64>,
        plugin_id: Option<String>,
        script_path: Option<String>,
    },
    /// A call of a client-implemented tool (`dynamicTools`).
    #[serde(rename_all = "camelCase")]
    DynamicToolCall {
        /// The tool call's `call_id`.
        id: String,
        tool: String,
        namespace: Option<String>,
        arguments: Value,
        /// `inProgress`, `completed` or `failed`.
        status: String,
        content_items: Option<Vec<super::approval::DynamicToolCallOutputContentItem>>,
        success: Option<bool>,
        duration_ms: Option<i64>,
    },
    /// A call of an MCP server's tool (or of a resource helper).
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        /// The tool call's `call_id`.
        id: String,
        server: String,
        tool: String,
        /// `inProgress`, `completed` or `failed`.
        status: String,
        arguments: Value,
        app_context: Option<Value>,
        mcp_app_ui: Option<Value>,
        plugin_id: Option<String>,
        read_only_hint: Option<bool>,
        /// The server's result: `content`, `structuredContent`, `_meta`.
        result: Option<McpToolCallResult>,
        error: Option<McpToolCallError>,
        duration_ms: Option<i64>,
    },
    /// Files an `apply_patch` call changes.
    FileChange {
        /// The tool call's `call_id`.
        id: String,
        changes: Vec<FileUpdateChange>,
        /// `inProgress`, `completed`, `failed` or `declined`.
        status: String,
    },
    /// The thread's history was compacted: replaced by the user's messages and a summary.
    /// `status` and `error` are openturn's additions (the reference sends the id alone):
    /// `inProgress` when it starts, then `completed`, or `failed` with `error` saying why (the
    /// history was then left as it was). A failed compaction completes too.
    ContextCompaction {
        id: String,
        status: String,
        error: Option<String>,
    },
    /// A review turn began; `review` labels what it looks at (`current changes`, …).
    EnteredReviewMode { id: String, review: String },
    /// A review turn's report, as rendered from the reviewer's answer.
    ExitedReviewMode { id: String, review: String },
    /// A search the provider ran with its hosted `web_search` tool.
    WebSearch {
        id: String,
        query: String,
        action: Option<WebSearchAction>,
        /// Not reported by the Responses API; always `null`.
        results: Option<Vec<Value>>,
    },
    /// An image the model looked at (`view_image`); `path` is absolute.
    ImageView { id: String, path: String },
    /// A sub-agent tool call (`multi_agent_v1`).
    #[serde(rename_all = "camelCase")]
    CollabAgentToolCall {
        id: String,
        /// `spawnAgent`, `sendInput`, `resumeAgent`, `wait` or `closeAgent`.
        tool: String,
        /// `inProgress`, `completed`, `failed` or `interrupted`.
        status: String,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        prompt: Option<String>,
        model: Option<String>,
        reasoning_effort: Option<String>,
        agents_states: std::collections::BTreeMap<String, CollabAgentState>,
    },
}

/// A sub-agent's last known status in a `collabAgentToolCall`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollabAgentState {
    /// `pendingInit`, `running`, `interrupted`, `completed`, `errored`, `shutdown` or `notFound`.
    pub status: String,
    pub message: Option<String>,
}

/// What a web search did, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum WebSearchAction {
    Search {
        query: Option<String>,
        queries: Option<Vec<String>>,
    },
    OpenPage {
        url: Option<String>,
    },
    FindInPage {
        url: Option<String>,
        pattern: Option<String>,
    },
    Other,
}

/// What an MCP tool call returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallResult {
    /// MCP content blocks (`text`, `image`, `resource`, …) as the server sent them.
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
    #[serde(rename = "_meta")]
    pub meta: Option<Value>,
}

/// Why an MCP tool call produced no result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpToolCallError {
    pub message: String,
}

/// One file of a `fileChange` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileUpdateChange {
    pub path: String,
    pub kind: PatchChangeKind,
    /// Unified diff of the change.
    pub diff: String,
}

/// What happens to the file, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    Add,
    Delete,
    Update { move_path: Option<String> },
}

impl ThreadItem {
    pub fn id(&self) -> &str {
        match &self.details {
            ThreadItemDetails::UserMessage { id, .. }
            | ThreadItemDetails::AgentMessage { id, .. }
            | ThreadItemDetails::Reasoning { id, .. }
            | ThreadItemDetails::Plan { id, .. }
            | ThreadItemDetails::CommandExecution { id, .. }
            | ThreadItemDetails::DynamicToolCall { id, .. }
            | ThreadItemDetails::FileChange { id, .. }
            | ThreadItemDetails::McpToolCall { id, .. }
            | ThreadItemDetails::ContextCompaction { id, .. }
            | ThreadItemDetails::EnteredReviewMode { id, .. }
            | ThreadItemDetails::ExitedReviewMode { id, .. }
            | ThreadItemDetails::WebSearch { id, .. }
            | ThreadItemDetails::ImageView { id, .. }
            | ThreadItemDetails::CollabAgentToolCall { id, .. } => id,
        }
    }
}
