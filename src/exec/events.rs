//! The exec events (`--json`): one JSON object per stdout line, in the shapes the reference's
//! `codex exec --json` prints and the TypeScript SDK parses. `docs/exec-events.schema.json`
//! describes the same shapes; the end-to-end tests validate every line against it.

use serde::Serialize;
use serde_json::Value;

/// One line of `--json` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum ExecEvent {
    /// First line of every run: the thread the turn belongs to (new or resumed).
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: String },
    #[serde(rename = "turn.started")]
    TurnStarted {},
    /// The turn ended normally; `usage` is the thread's cumulative token usage.
    #[serde(rename = "turn.completed")]
    TurnCompleted { usage: Usage },
    /// The turn failed or was interrupted.
    #[serde(rename = "turn.failed")]
    TurnFailed { error: ErrorMessage },
    #[serde(rename = "item.started")]
    ItemStarted { item: ExecItem },
    #[serde(rename = "item.updated")]
    ItemUpdated { item: ExecItem },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: ExecItem },
    /// A fatal error reported by the server, before the `turn.failed` it causes.
    #[serde(rename = "error")]
    Error { message: String },
}

/// Token counts, cumulative over the thread (never absent: zeros before any usage is known).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub cache_write_input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_output_tokens: i64,
}

impl Usage {
    /// From a protocol `TokenUsageBreakdown` object (camelCase); missing counts read as 0.
    pub fn from_breakdown(breakdown: &Value) -> Usage {
        let count = |key: &str| breakdown[key].as_i64().unwrap_or(0);
        Usage {
            input_tokens: count("inputTokens"),
            cached_input_tokens: count("cachedInputTokens"),
            cache_write_input_tokens: count("cacheWriteInputTokens"),
            output_tokens: count("outputTokens"),
            reasoning_output_tokens: count("reasoningOutputTokens"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorMessage {
    pub message: String,
}

/// An item: exec's own id (`item_0`, `item_1`, … in order of first appearance) and its details.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecItem {
    pub id: String,
    #[serde(flatten)]
    pub details: ExecItemDetails,
}

/// The item kinds, tagged by `type` in snake_case.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExecItemDetails {
    AgentMessage {
        text: String,
    },
    Reasoning {
        text: String,
    },
    CommandExecution {
        command: String,
        aggregated_output: String,
        exit_code: Option<i64>,
        /// `in_progress`, `completed`, `failed` or `declined`.
        status: String,
    },
    FileChange {
        /// `[{path, kind: "add" | "delete" | "update"}]`.
        changes: Vec<FileChange>,
        /// `in_progress`, `completed`, `failed` or `declined`.
        status: String,
    },
    McpToolCall {
        server: String,
        tool: String,
        arguments: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ErrorMessage>,
        status: String,
    },
    TodoList {
        items: Vec<TodoItem>,
    },
    /// A non-fatal problem worth showing (a server warning).
    Error {
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    pub path: String,
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TodoItem {
    pub text: String,
    pub completed: bool,
}

/// camelCase protocol statuses → exec's snake_case (`inProgress` → `in_progress`).
pub fn snake_status(status: &str) -> String {
    match status {
        "inProgress" => "in_progress".to_string(),
        other => other.to_string(),
    }
}
