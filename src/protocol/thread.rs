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
    /// `vscode`, `cli`, …, or for a sub-agent `{"subAgent": {"thread_spawn": {…}}}`.
    pub source: Value,
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
    /// Where the thread runs: openturn has one environment, `local`, at the thread's cwd.
    #[serde(default)]
    pub environments: Vec<ThreadEnvironment>,
    /// Whether a client may send the thread input directly (a sub-agent thread would not);
    /// every openturn thread accepts it.
    #[serde(default = "accepts_direct_input")]
    pub can_accept_direct_input: bool,
    /// Reference key with no openturn counterpart: always `null`, present so clients that
    /// index it find it.
    #[serde(default)]
    pub extra: Option<Value>,
    /// The thread this one is attached to (the reference's sub-agents); always `null` here.
    #[serde(default)]
    pub attached_to_thread_id: Option<String>,
    /// A reference feature flag openturn does not have; always `null`.
    #[serde(default)]
    pub daybreak_enabled: Option<bool>,
}

fn accepts_direct_input() -> bool {
    true
}

/// An environment a thread runs in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadEnvironment {
    /// `local` for openturn.
    pub environment_id: String,
    pub cwd: String,
    /// The workspace roots commands run against; openturn's is the thread's cwd.
    pub runtime_workspace_roots: Vec<String>,
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
    /// The thread's service tier (`flex`, `fast`, …), sent upstream as `service_tier` (`fast`
    /// as `priority`).
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Deprecated upstream (`none|friendly|pragmatic`); accepted and ignored.
    #[serde(default)]
    pub personality: Option<String>,
    /// `startup` or `clear`; informational.
    #[serde(default)]
    pub session_start_source: Option<String>,
    #[serde(default)]
    pub thread_source: Option<Value>,
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
    /// The workspace roots commands run against: the thread's cwd.
    #[serde(default)]
    pub runtime_workspace_roots: Vec<String>,
    /// The permissions profile in effect; openturn has none (`null`), `sandbox` says it all.
    #[serde(default)]
    pub active_permission_profile: Option<Value>,
}

/// `thread/resume`: the thread to load plus the same overrides as `thread/start`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeParams {
    pub thread_id: String,
    #[serde(flatten)]
    pub overrides: ThreadStartParams,
    /// Leave `thread.turns` empty.
    #[serde(default)]
    pub exclude_turns: bool,
    /// Extra (openturn): return at most this many of the newest turns; older ones are reached
    /// through `turnsBackwardsCursor` with `thread/read`.
    #[serde(default)]
    pub turns_limit: Option<u32>,
}

/// `thread/resume`'s result: the start result plus paging cursors.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeResponse {
    #[serde(flatten)]
    pub base: ThreadStartResponse,
    pub collaboration_mode: Option<Value>,
    /// Opaque cursor for older turns (pass as `turnsCursor` to `thread/read`), or `null`.
    pub turns_backwards_cursor: Option<String>,
    pub items_backwards_cursor: Option<String>,
    /// The reference's first page of turns when it pages them itself; openturn returns turns
    /// in `thread.turns`, so this is `null`.
    #[serde(default)]
    pub initial_turns_page: Option<Value>,
}

/// `thread/fork`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadForkParams {
    pub thread_id: String,
    #[serde(flatten)]
    pub overrides: ThreadStartParams,
    #[serde(default)]
    pub exclude_turns: bool,
    /// Copy turns up to and including this one.
    #[serde(default)]
    pub last_turn_id: Option<String>,
}

/// The most ids `thread/list`'s `includedThreadIds` may name.
pub const MAX_INCLUDED_THREAD_IDS: usize = 100;

/// `thread/list`: filters and paging; every field optional.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub sort_key: Option<ThreadSortKey>,
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// `true`: only archived threads; otherwise only live ones.
    #[serde(default)]
    pub archived: Option<bool>,
    /// One path or several, matched exactly.
    #[serde(default)]
    pub cwd: Option<CwdFilter>,
    /// Empty or absent: every provider.
    #[serde(default)]
    pub model_providers: Option<Vec<String>>,
    /// Empty or absent: interactive sources (`cli`, `vscode`, `appServer`).
    #[serde(default)]
    pub source_kinds: Option<Vec<String>>,
    /// Case-sensitive substring of the thread's name.
    #[serde(default)]
    pub search_term: Option<String>,
    #[serde(default)]
    pub excluded_thread_ids: Option<Vec<String>>,
    /// Only these threads (at most [`MAX_INCLUDED_THREAD_IDS`]); an empty list matches nothing.
    /// Exclusions still apply.
    #[serde(default)]
    pub included_thread_ids: Option<Vec<String>>,
    #[serde(default)]
    pub originators: Option<Vec<String>>,
    #[serde(default)]
    pub use_state_db_only: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CwdFilter {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadSortKey {
    CreatedAt,
    UpdatedAt,
    RecencyAt,
    SectionPosition,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortDirection {
    Asc,
    Desc,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListResponse {
    pub data: Vec<Thread>,
    /// `null` on the last page.
    pub next_cursor: Option<String>,
    /// Pass with the opposite `sortDirection` to page back from this page's first thread.
    pub backwards_cursor: Option<String>,
}

/// `thread/read`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadParams {
    pub thread_id: String,
    #[serde(default)]
    pub include_turns: bool,
    /// Extra (openturn): at most this many turns, newest last.
    #[serde(default)]
    pub turns_limit: Option<u32>,
    /// Extra (openturn): a `turnsBackwardsCursor` from an earlier page; returns older turns.
    #[serde(default)]
    pub turns_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadResponse {
    pub thread: Thread,
    /// Extra (openturn): cursor for the turns before this page, `null` when there are none.
    pub turns_backwards_cursor: Option<String>,
}

/// Params naming just a thread (`thread/archive`, `thread/unarchive`, `thread/unsubscribe`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdParams {
    pub thread_id: String,
}

/// `{"thread": …}` (`thread/unarchive`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadResponse {
    pub thread: Thread,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSetNameParams {
    pub thread_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListResponse {
    pub data: Vec<String>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadUnsubscribeStatus {
    Unsubscribed,
    NotSubscribed,
    NotLoaded,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadUnsubscribeResponse {
    pub status: ThreadUnsubscribeStatus,
}
