//! Client-visible items of a turn, in the domain's terms. The server converts them to protocol
//! `ThreadItem`s; the rollout stores them (serialized by serde here) to rebuild turns on resume.

use serde::{Deserialize, Serialize};

use super::ids::ItemId;

/// One piece of user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserInput {
    Text {
        text: String,
    },
    Image {
        url: String,
        /// `auto`, `low`, `high` or `original`, passed to the provider as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    LocalImage {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A skill the user picked: its `SKILL.md` goes to the model.
    Skill {
        name: String,
        path: String,
    },
    /// A file or resource the text names; shown on the item, nothing more for the model.
    Mention {
        name: String,
        path: String,
    },
}

/// The memory files and earlier threads an agent message cited (hidden from its text).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemoryCitation {
    pub entries: Vec<MemoryCitationEntry>,
    pub thread_ids: Vec<String>,
}

/// One cited line range of a memory file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryCitationEntry {
    pub path: String,
    pub line_start: u32,
    pub line_end: u32,
    pub note: String,
}

/// A completed (or starting) item of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnItem {
    UserMessage {
        id: ItemId,
        content: Vec<UserInput>,
        #[serde(default)]
        client_id: Option<String>,
    },
    AgentMessage {
        id: ItemId,
        text: String,
        #[serde(default)]
        phase: Option<String>,
        /// What the hidden `<oai-mem-citation>` blocks of the message cited.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_citation: Option<MemoryCitation>,
    },
    Reasoning {
        id: ItemId,
        #[serde(default)]
        summary: Vec<String>,
        #[serde(default)]
        content: Vec<String>,
    },
    /// Plan mode: the `<proposed_plan>` block of an agent message; id `<turnId>-plan`.
    Plan { id: ItemId, text: String },
    /// A shell command the model ran (id = the tool call's `call_id`).
    CommandExecution {
        id: ItemId,
        /// The display string actually run, e.g. `/bin/bash -lc 'echo hi'`.
        command: String,
        cwd: String,
        status: ToolItemStatus,
        #[serde(default)]
        aggregated_output: Option<String>,
        #[serde(default)]
        exit_code: Option<i32>,
        #[serde(default)]
        duration_ms: Option<i64>,
        #[serde(default)]
        process_id: Option<String>,
        /// The raw command the model asked for (without the shell wrapper).
        #[serde(default)]
        raw_command: String,
    },
    /// A call of a client-implemented tool declared on `thread/start` (id = `call_id`).
    DynamicToolCall {
        id: ItemId,
        tool: String,
        #[serde(default)]
        namespace: Option<String>,
        arguments: serde_json::Value,
        status: ToolItemStatus,
        #[serde(default)]
        content_items: Option<Vec<ToolContent>>,
        #[serde(default)]
        success: Option<bool>,
        #[serde(default)]
        duration_ms: Option<i64>,
    },
    /// A call of an MCP server's tool, or of a resource helper (id = `call_id`).
    McpToolCall {
        id: ItemId,
        server: String,
        tool: String,
        arguments: serde_json::Value,
        status: ToolItemStatus,
        /// The MCP `CallToolResult` (`content`, `structuredContent`, `_meta`).
        #[serde(default)]
        result: Option<serde_json::Value>,
        /// Why the call produced no result.
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        duration_ms: Option<i64>,
    },
    /// An `apply_patch` call (id = the call's `call_id`): the files it changes, each with its
    /// unified diff.
    FileChange {
        id: ItemId,
        changes: Vec<FileChangeEntry>,
        status: ToolItemStatus,
    },
    /// A compaction of the thread's history ran in this turn (manual or automatic). A failed one
    /// completes too, with `status` failed and `error` saying why; the history was left as it
    /// was.
    ContextCompaction {
        id: ItemId,
        /// Lines written before compactions could fail hold only the id: they succeeded.
        #[serde(default = "completed_status")]
        status: ToolItemStatus,
        #[serde(default)]
        error: Option<String>,
    },
    /// A review turn began (`review/start`); `review` labels what it looks at.
    EnteredReviewMode { id: ItemId, review: String },
    /// A review turn's report, as the client shows it.
    ExitedReviewMode { id: ItemId, review: String },
    /// A search the provider ran with its hosted `web_search` tool (id = the provider's item id).
    WebSearch {
        id: ItemId,
        /// The search's query (empty for an action that is not a search).
        query: String,
        #[serde(default)]
        action: Option<WebSearchAction>,
    },
    /// An image the model looked at with `view_image` (id = the call's `call_id`).
    ImageView { id: ItemId, path: String },
    /// A call of a sub-agent tool (`multi_agent_v1`; id = the call's `call_id`).
    CollabAgentToolCall {
        id: ItemId,
        /// `spawnAgent`, `sendInput`, `resumeAgent`, `wait` or `closeAgent`.
        tool: String,
        status: ToolItemStatus,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        #[serde(default)]
        prompt: Option<String>,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        reasoning_effort: Option<String>,
        /// Each receiver's status (`pendingInit`, `running`, `completed`, …) and message.
        #[serde(default)]
        agents_states: std::collections::BTreeMap<String, (String, Option<String>)>,
    },
}

/// What a hosted web search did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WebSearchAction {
    Search {
        #[serde(default)]
        query: Option<String>,
        #[serde(default)]
        queries: Option<Vec<String>>,
    },
    OpenPage {
        #[serde(default)]
        url: Option<String>,
    },
    FindInPage {
        #[serde(default)]
        url: Option<String>,
        #[serde(default)]
        pattern: Option<String>,
    },
    #[serde(other)]
    Other,
}

impl WebSearchAction {
    /// The action of a `web_search_call` item as the provider sent it (`None`: it sent none, or
    /// one whose fields do not fit; an unknown kind is `Other`).
    pub fn from_wire(action: Option<&serde_json::Value>) -> Option<WebSearchAction> {
        serde_json::from_value(action?.clone()).ok()
    }

    /// The query the client shows: the search's query, else its first query.
    pub fn query(&self) -> String {
        match self {
            WebSearchAction::Search { query, queries } => query
                .clone()
                .or_else(|| queries.as_ref().and_then(|all| all.first().cloned()))
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// One file of a [`TurnItem::FileChange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChangeEntry {
    pub path: String,
    pub kind: FileChangeKind,
    /// Unified diff of the change (for an add: every line added; a delete: every line removed).
    pub diff: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileChangeKind {
    Add,
    Delete,
    Update {
        #[serde(default)]
        move_path: Option<String>,
    },
}

/// Where a tool item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolItemStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

fn completed_status() -> ToolItemStatus {
    ToolItemStatus::Completed
}

/// One piece of a client tool's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolContent {
    InputText { text: String },
    InputImage { image_url: String },
}

impl TurnItem {
    pub fn id(&self) -> &ItemId {
        match self {
            TurnItem::UserMessage { id, .. }
            | TurnItem::AgentMessage { id, .. }
            | TurnItem::Reasoning { id, .. }
            | TurnItem::Plan { id, .. }
            | TurnItem::CommandExecution { id, .. }
            | TurnItem::DynamicToolCall { id, .. }
            | TurnItem::FileChange { id, .. }
            | TurnItem::McpToolCall { id, .. }
            | TurnItem::ContextCompaction { id, .. }
            | TurnItem::EnteredReviewMode { id, .. }
            | TurnItem::ExitedReviewMode { id, .. }
            | TurnItem::WebSearch { id, .. }
            | TurnItem::ImageView { id, .. }
            | TurnItem::CollabAgentToolCall { id, .. } => id,
        }
    }
}
