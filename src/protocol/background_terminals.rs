//! `thread/backgroundTerminals/*`: a thread's commands still running after their turn (the
//! model's `exec_command` sessions), listed in pages, terminated one by one or all at once.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `thread/backgroundTerminals/list`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListParams {
    pub thread_id: String,
    /// Opaque pagination cursor returned by a previous call.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Optional page size.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// One running command of a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminal {
    /// The `commandExecution` item the command belongs to.
    pub item_id: String,
    /// The session's id, as in the item's `processId`.
    pub process_id: String,
    /// The command line as the model wrote it.
    pub command: String,
    pub cwd: String,
    /// The OS pid of the command's leader, when it is known.
    pub os_pid: Option<u32>,
    pub cpu_percent: Option<f64>,
    pub rss_kb: Option<u64>,
}

/// A page of running commands, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListResponse {
    pub data: Vec<ThreadBackgroundTerminal>,
    /// Where the next page starts; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// `thread/backgroundTerminals/terminate`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsTerminateParams {
    pub thread_id: String,
    pub process_id: String,
}

/// Whether a running command of that id was found and killed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsTerminateResponse {
    pub terminated: bool,
}

/// `thread/backgroundTerminals/clean`: kills every running command of the thread.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsCleanParams {
    pub thread_id: String,
}
