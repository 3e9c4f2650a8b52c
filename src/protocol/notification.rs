//! Server → client notifications: one enum, tagged by method name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::account::{AccountLoginCompletedNotification, AccountUpdatedNotification};
use super::approval::ServerRequestResolvedNotification;
use super::item::ThreadItem;
use super::thread::{Thread, ThreadStatus};
use super::turn::{Turn, TurnError, TurnPlanUpdatedNotification};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method", content = "params")]
pub enum ServerNotification {
    #[serde(rename = "thread/started")]
    ThreadStarted(ThreadStartedNotification),
    #[serde(rename = "thread/status/changed")]
    ThreadStatusChanged(ThreadStatusChangedNotification),
    #[serde(rename = "turn/started")]
    TurnStarted(TurnNotification),
    #[serde(rename = "turn/completed")]
    TurnCompleted(TurnNotification),
    #[serde(rename = "item/started")]
    ItemStarted(ItemStartedNotification),
    #[serde(rename = "item/completed")]
    ItemCompleted(ItemCompletedNotification),
    #[serde(rename = "item/agentMessage/delta")]
    AgentMessageDelta(ItemDeltaNotification),
    #[serde(rename = "item/reasoning/summaryTextDelta")]
    ReasoningSummaryTextDelta(ReasoningSummaryTextDeltaNotification),
    #[serde(rename = "item/reasoning/summaryPartAdded")]
    ReasoningSummaryPartAdded(ReasoningSummaryPartAddedNotification),
    #[serde(rename = "item/reasoning/textDelta")]
    ReasoningTextDelta(ReasoningTextDeltaNotification),
    #[serde(rename = "thread/tokenUsage/updated")]
    TokenUsageUpdated(TokenUsageUpdatedNotification),
    #[serde(rename = "account/rateLimits/updated")]
    RateLimitsUpdated(RateLimitsUpdatedNotification),
    #[serde(rename = "turn/diff/updated")]
    TurnDiffUpdated(TurnDiffUpdatedNotification),
    #[serde(rename = "item/fileChange/patchUpdated")]
    FileChangePatchUpdated(FileChangePatchUpdatedNotification),
    #[serde(rename = "model/rerouted")]
    ModelRerouted(ModelReroutedNotification),
    #[serde(rename = "error")]
    Error(ErrorNotification),
    #[serde(rename = "warning")]
    Warning(WarningNotification),
    #[serde(rename = "item/plan/delta")]
    PlanDelta(ItemDeltaNotification),
    #[serde(rename = "turn/plan/updated")]
    TurnPlanUpdated(TurnPlanUpdatedNotification),
    #[serde(rename = "item/commandExecution/outputDelta")]
    CommandExecutionOutputDelta(ItemDeltaNotification),
    #[serde(rename = "item/commandExecution/terminalInteraction")]
    TerminalInteraction(TerminalInteractionNotification),
    #[serde(rename = "serverRequest/resolved")]
    ServerRequestResolved(ServerRequestResolvedNotification),
    #[serde(rename = "thread/archived")]
    ThreadArchived(ThreadIdNotification),
    #[serde(rename = "thread/unarchived")]
    ThreadUnarchived(ThreadIdNotification),
    #[serde(rename = "thread/closed")]
    ThreadClosed(ThreadIdNotification),
    #[serde(rename = "thread/deleted")]
    ThreadDeleted(ThreadIdNotification),
    #[serde(rename = "thread/reverted")]
    ThreadReverted(ThreadIdNotification),
    #[serde(rename = "thread/name/updated")]
    ThreadNameUpdated(ThreadNameUpdatedNotification),
    #[serde(rename = "thread/settings/updated")]
    ThreadSettingsUpdated(super::thread_settings::ThreadSettingsUpdatedNotification),
    #[serde(rename = "command/exec/outputDelta")]
    CommandExecOutputDelta(CommandExecOutputDeltaNotification),
    #[serde(rename = "configWarning")]
    ConfigWarning(ConfigWarningNotification),
    #[serde(rename = "account/login/completed")]
    AccountLoginCompleted(AccountLoginCompletedNotification),
    #[serde(rename = "account/updated")]
    AccountUpdated(AccountUpdatedNotification),
    #[serde(rename = "mcpServer/startupStatus/updated")]
    McpServerStartupStatusUpdated(super::mcp::McpServerStartupStatusUpdatedNotification),
    #[serde(rename = "item/mcpToolCall/progress")]
    McpToolCallProgress(super::mcp::McpToolCallProgressNotification),
    #[serde(rename = "thread/goal/updated")]
    ThreadGoalUpdated(super::goal::ThreadGoalUpdatedNotification),
    #[serde(rename = "thread/goal/cleared")]
    ThreadGoalCleared(super::goal::ThreadGoalClearedNotification),
    #[serde(rename = "fs/changed")]
    FsChanged(super::fs::FsChangedNotification),
    #[serde(rename = "fuzzyFileSearch/sessionUpdated")]
    FuzzyFileSearchSessionUpdated(super::file_search::FuzzyFileSearchSessionUpdatedNotification),
    #[serde(rename = "fuzzyFileSearch/sessionCompleted")]
    FuzzyFileSearchSessionCompleted(
        super::file_search::FuzzyFileSearchSessionCompletedNotification,
    ),
    #[serde(rename = "process/outputDelta")]
    ProcessOutputDelta(super::process::ProcessOutputDeltaNotification),
    #[serde(rename = "process/exited")]
    ProcessExited(super::process::ProcessExitedNotification),
    #[serde(rename = "mcpServer/oauthLogin/completed")]
    McpServerOauthLoginCompleted(super::mcp_oauth::McpServerOauthLoginCompletedNotification),
}

impl ServerNotification {
    /// The wire method name, for opt-out filtering.
    pub fn method(&self) -> &'static str {
        match self {
            ServerNotification::ThreadStarted(_) => "thread/started",
            ServerNotification::ThreadStatusChanged(_) => "thread/status/changed",
            ServerNotification::TurnStarted(_) => "turn/started",
            ServerNotification::TurnCompleted(_) => "turn/completed",
            ServerNotification::ItemStarted(_) => "item/started",
            ServerNotification::ItemCompleted(_) => "item/completed",
            ServerNotification::AgentMessageDelta(_) => "item/agentMessage/delta",
            ServerNotification::ReasoningSummaryTextDelta(_) => "item/reasoning/summaryTextDelta",
            ServerNotification::ReasoningSummaryPartAdded(_) => "item/reasoning/summaryPartAdded",
            ServerNotification::ReasoningTextDelta(_) => "item/reasoning/textDelta",
            ServerNotification::TokenUsageUpdated(_) => "thread/tokenUsage/updated",
            ServerNotification::RateLimitsUpdated(_) => "account/rateLimits/updated",
            ServerNotification::ModelRerouted(_) => "model/rerouted",
            ServerNotification::FileChangePatchUpdated(_) => "item/fileChange/patchUpdated",
            ServerNotification::TurnDiffUpdated(_) => "turn/diff/updated",
            ServerNotification::Error(_) => "error",
            ServerNotification::Warning(_) => "warning",
            ServerNotification::PlanDelta(_) => "item/plan/delta",
            ServerNotification::TurnPlanUpdated(_) => "turn/plan/updated",
            ServerNotification::CommandExecutionOutputDelta(_) => {
                "item/commandExecution/outputDelta"
            }
            ServerNotification::TerminalInteraction(_) => {
                "item/commandExecution/terminalInteraction"
            }
            ServerNotification::ServerRequestResolved(_) => "serverRequest/resolved",
            ServerNotification::ThreadArchived(_) => "thread/archived",
            ServerNotification::ThreadUnarchived(_) => "thread/unarchived",
            ServerNotification::ThreadClosed(_) => "thread/closed",
            ServerNotification::ThreadDeleted(_) => "thread/deleted",
            ServerNotification::ThreadReverted(_) => "thread/reverted",
            ServerNotification::ThreadNameUpdated(_) => "thread/name/updated",
            ServerNotification::ThreadSettingsUpdated(_) => "thread/settings/updated",
            ServerNotification::CommandExecOutputDelta(_) => "command/exec/outputDelta",
            ServerNotification::ConfigWarning(_) => "configWarning",
            ServerNotification::AccountLoginCompleted(_) => "account/login/completed",
            ServerNotification::AccountUpdated(_) => "account/updated",
            ServerNotification::McpServerStartupStatusUpdated(_) => {
                "mcpServer/startupStatus/updated"
            }
            ServerNotification::McpToolCallProgress(_) => "item/mcpToolCall/progress",
            ServerNotification::ThreadGoalUpdated(_) => "thread/goal/updated",
            ServerNotification::ThreadGoalCleared(_) => "thread/goal/cleared",
            ServerNotification::FsChanged(_) => "fs/changed",
            ServerNotification::FuzzyFileSearchSessionUpdated(_) => {
                "fuzzyFileSearch/sessionUpdated"
            }
            ServerNotification::FuzzyFileSearchSessionCompleted(_) => {
                "fuzzyFileSearch/sessionCompleted"
            }
            ServerNotification::ProcessOutputDelta(_) => "process/outputDelta",
            ServerNotification::ProcessExited(_) => "process/exited",
            ServerNotification::McpServerOauthLoginCompleted(_) => "mcpServer/oauthLogin/completed",
        }
    }

    /// The thread a notification belongs to, when it is thread-scoped.
    pub fn thread_id(&self) -> Option<&str> {
        match self {
            ServerNotification::ThreadStarted(n) => Some(&n.thread.id),
            ServerNotification::ThreadStatusChanged(n) => Some(&n.thread_id),
            ServerNotification::TurnStarted(n) | ServerNotification::TurnCompleted(n) => {
                Some(&n.thread_id)
            }
            ServerNotification::ItemStarted(n) => Some(&n.thread_id),
            ServerNotification::ItemCompleted(n) => Some(&n.thread_id),
            ServerNotification::AgentMessageDelta(n) => Some(&n.thread_id),
            ServerNotification::ReasoningSummaryTextDelta(n) => Some(&n.thread_id),
            ServerNotification::ReasoningSummaryPartAdded(n) => Some(&n.thread_id),
            ServerNotification::ReasoningTextDelta(n) => Some(&n.thread_id),
            ServerNotification::PlanDelta(n)
            | ServerNotification::CommandExecutionOutputDelta(n) => Some(&n.thread_id),
            ServerNotification::TerminalInteraction(n) => Some(&n.thread_id),
            ServerNotification::TokenUsageUpdated(n) => Some(&n.thread_id),
            ServerNotification::TurnPlanUpdated(n) => Some(&n.thread_id),
            ServerNotification::ModelRerouted(n) => Some(&n.thread_id),
            ServerNotification::FileChangePatchUpdated(n) => Some(&n.thread_id),
            ServerNotification::TurnDiffUpdated(n) => Some(&n.thread_id),
            ServerNotification::Error(n) => Some(&n.thread_id),
            ServerNotification::Warning(n) => n.thread_id.as_deref(),
            ServerNotification::ThreadArchived(n)
            | ServerNotification::ThreadUnarchived(n)
            | ServerNotification::ThreadClosed(n)
            | ServerNotification::ThreadDeleted(n)
            | ServerNotification::ThreadReverted(n) => Some(&n.thread_id),
            ServerNotification::ThreadNameUpdated(n) => Some(&n.thread_id),
            ServerNotification::ThreadSettingsUpdated(n) => Some(&n.thread_id),
            ServerNotification::ServerRequestResolved(n) => Some(&n.thread_id),
            ServerNotification::McpServerStartupStatusUpdated(n) => n.thread_id.as_deref(),
            ServerNotification::McpToolCallProgress(n) => Some(&n.thread_id),
            ServerNotification::ThreadGoalUpdated(n) => Some(&n.thread_id),
            ServerNotification::ThreadGoalCleared(n) => Some(&n.thread_id),
            ServerNotification::RateLimitsUpdated(_)
            | ServerNotification::CommandExecOutputDelta(_)
            | ServerNotification::ConfigWarning(_)
            | ServerNotification::AccountLoginCompleted(_)
            | ServerNotification::AccountUpdated(_)
            | ServerNotification::FsChanged(_)
            | ServerNotification::FuzzyFileSearchSessionUpdated(_)
            | ServerNotification::FuzzyFileSearchSessionCompleted(_)
            | ServerNotification::ProcessOutputDelta(_)
            | ServerNotification::ProcessExited(_)
            // Told to the connection that asked, whichever thread it names.
            | ServerNotification::McpServerOauthLoginCompleted(_) => None,
        }
    }

    /// Whether this is a piece of a thread's streamed text (an answer's, a reasoning's, a
    /// plan's or a command's output): the notifications a fast stream is made of, which a
    /// connection may get up to 4 ms later, gathered with the next ones (see
    /// `server::fanout`). Everything else goes out at once.
    pub fn is_streamed_delta(&self) -> bool {
        matches!(
            self,
            ServerNotification::AgentMessageDelta(_)
                | ServerNotification::ReasoningSummaryTextDelta(_)
                | ServerNotification::ReasoningTextDelta(_)
                | ServerNotification::PlanDelta(_)
                | ServerNotification::CommandExecutionOutputDelta(_)
        )
    }

    /// Thread lifecycle notifications reach every connection that knows the thread, subscribed
    /// or not (docs/PROTOCOL.md §4, "Fan-out"); everything else thread-scoped is for subscribers only.
    pub fn reaches_unsubscribed(&self) -> bool {
        matches!(
            self,
            ServerNotification::ThreadStatusChanged(_)
                | ServerNotification::ThreadClosed(_)
                | ServerNotification::ThreadNameUpdated(_)
                | ServerNotification::ThreadUnarchived(_)
                | ServerNotification::ThreadArchived(_)
                | ServerNotification::ThreadDeleted(_)
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadStartedNotification {
    pub thread: Box<Thread>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStatusChangedNotification {
    pub thread_id: String,
    pub status: ThreadStatus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnNotification {
    pub thread_id: String,
    pub turn: Turn,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemStartedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item: ThreadItem,
    pub started_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemCompletedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item: ThreadItem,
    pub completed_at_ms: i64,
    pub content_token_count: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemDeltaNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub delta: String,
}

/// What was written to a running command's stdin (empty: the model only polled its output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalInteractionNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    /// The command's session, as in the item's `processId`.
    pub process_id: String,
    pub stdin: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSummaryTextDeltaNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub delta: String,
    pub summary_index: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSummaryPartAddedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub summary_index: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningTextDeltaNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub delta: String,
    pub content_index: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageUpdatedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub token_usage: ThreadTokenUsage,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsage {
    pub total: TokenUsageBreakdown,
    pub last: TokenUsageBreakdown,
    pub model_context_window: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    pub total_tokens: i64,
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub cache_write_input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_output_tokens: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitsUpdatedNotification {
    pub rate_limits: RateLimitSnapshot,
}

/// The account's rate limits. The last four keys are the reference's, filled only by its own
/// backend (model slugs, per-user limits, spend controls); openturn sends them as `null` so
/// clients that expect the keys find them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitSnapshot {
    pub limit_id: Option<String>,
    pub limit_name: Option<String>,
    pub primary: Option<RateLimitWindow>,
    pub secondary: Option<RateLimitWindow>,
    pub credits: Option<Value>,
    pub plan_type: Option<String>,
    pub normal_model_slug: Option<String>,
    pub individual_limit: Option<Value>,
    pub spend_control_reached: Option<bool>,
    pub rate_limit_reached_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitWindow {
    pub used_percent: i64,
    pub window_duration_mins: Option<i64>,
    pub resets_at: Option<i64>,
}

/// `turn/diff/updated`: the turn's cumulative unified diff of the files it changed so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnDiffUpdatedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub diff: String,
}

/// `item/fileChange/patchUpdated`: the files and hunks of an `apply_patch` call parsed so far,
/// sent while the model is still writing it (after its `fileChange` item started, before it
/// completes). Each `diff` holds the hunks as written in the patch, not yet matched against the
/// file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangePatchUpdatedNotification {
    pub thread_id: String,
    pub turn_id: String,
    /// The call id, which becomes the `fileChange` item's id.
    pub item_id: String,
    pub changes: Vec<super::item::FileUpdateChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelReroutedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub from_model: String,
    pub to_model: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub error: TurnError,
    pub will_retry: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    pub message: String,
    pub thread_id: Option<String>,
}

/// `configWarning`: configuration that was accepted but is not acted on as written (an unknown
/// key, a setting openturn ignores), sent after `initialize` and after a request whose `config`
/// object has such a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWarningNotification {
    /// What is ignored and, for a likely typo, the key that was probably meant.
    pub summary: String,
    pub details: Option<String>,
    /// The config file the setting is in, when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `{threadId}`: `thread/archived`, `thread/unarchived`, `thread/closed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdNotification {
    pub thread_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadNameUpdatedNotification {
    pub thread_id: String,
    pub thread_name: Option<String>,
}

/// A chunk of a streaming `command/exec`'s output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecOutputDeltaNotification {
    pub process_id: String,
    /// `stdout` or `stderr`.
    pub stream: String,
    pub delta_base64: String,
    pub cap_reached: bool,
}
