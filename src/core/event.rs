//! `EventMsg`: everything core tells the outside world, in the order it happened.

/// Usage and rate-limit values are plain data shared with the wire layer; re-exported so the
/// server reads them through core.
pub use crate::wire::event::{RateLimitSnapshot, RateLimitWindow};
pub use crate::wire::TokenUsage;

use super::approval::ClientRequest;
use super::error::TurnError;
use super::ids::{ItemId, TurnId};
use super::items::TurnItem;

/// One step of the model's plan (`update_plan`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    pub step: String,
    pub status: PlanStepStatus,
}

/// Where a plan step stands; the model writes these in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStepStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventMsg {
    TurnStarted {
        turn_id: TurnId,
        started_at: i64,
    },
    ItemStarted {
        turn_id: TurnId,
        item: TurnItem,
        /// When core saw the item start (Unix ms), stamped once: the live notification and the
        /// item's rollout record carry this same figure.
        started_at_ms: i64,
    },
    ItemCompleted {
        turn_id: TurnId,
        item: TurnItem,
        /// The item's start as its `ItemStarted` carried it (its completion time for an item
        /// that was never announced as started).
        started_at_ms: i64,
        /// When core saw the item complete (Unix ms); stored with the item's rollout record.
        completed_at_ms: i64,
    },
    AgentMessageDelta {
        turn_id: TurnId,
        item_id: ItemId,
        delta: String,
    },
    ReasoningSummaryDelta {
        turn_id: TurnId,
        item_id: ItemId,
        delta: String,
        summary_index: i64,
    },
    ReasoningSummaryPartAdded {
        turn_id: TurnId,
        item_id: ItemId,
        summary_index: i64,
    },
    /// Plan mode: a piece of the `<proposed_plan>` block, for the plan item.
    PlanDelta {
        turn_id: TurnId,
        item_id: ItemId,
        delta: String,
    },
    /// The model's plan after an `update_plan` call: every step, in order.
    PlanUpdated {
        turn_id: TurnId,
        explanation: Option<String>,
        plan: Vec<PlanStep>,
    },
    /// Output of a running command, as it arrives (stdout and stderr interleaved).
    CommandOutputDelta {
        turn_id: TurnId,
        item_id: ItemId,
        delta: String,
    },
    /// The model wrote to (or, with empty `stdin`, polled) a running command's session.
    TerminalInteraction {
        turn_id: TurnId,
        item_id: ItemId,
        process_id: String,
        stdin: String,
    },
    /// What the thread waits on the client for changed: an approval (any open approval or
    /// elicitation) and the user's input (any open question of the model). Emitted by the one
    /// `ask` (`core/ask.rs`) when a flag goes up or comes down.
    WaitingOnClient {
        approval: bool,
        user_input: bool,
    },
    /// A question for the client (approval, client tool); the server sends it in event order and
    /// answers through the request's reply slot.
    ClientRequest(ClientRequest),
    ReasoningRawDelta {
        turn_id: TurnId,
        item_id: ItemId,
        delta: String,
        content_index: i64,
    },
    /// After every `response.completed`: cumulative and last usage.
    TokenCount {
        turn_id: TurnId,
        total: TokenUsage,
        last: TokenUsage,
        model_context_window: Option<i64>,
    },
    RateLimits {
        turn_id: TurnId,
        snapshot: Option<RateLimitSnapshot>,
    },
    /// The turn's cumulative unified diff of the files its patches changed.
    TurnDiff {
        turn_id: TurnId,
        diff: String,
    },
    /// The `apply_patch` input the model is still writing, parsed so far (item = call id).
    PatchUpdated {
        turn_id: TurnId,
        item_id: ItemId,
        changes: Vec<super::items::FileChangeEntry>,
    },
    /// An MCP server of the thread is starting, became ready, failed to start, or died.
    McpStartupStatus {
        server: String,
        state: crate::mcp::StartupState,
    },
    /// A running MCP tool call reported progress (item = the call's id).
    McpToolCallProgress {
        turn_id: TurnId,
        item_id: ItemId,
        message: String,
    },
    ModelRerouted {
        turn_id: TurnId,
        from_model: String,
        to_model: String,
    },
    Warning {
        message: String,
    },
    /// The thread's goal changed (`turn_id`: the turn that changed it, if one did).
    GoalUpdated {
        turn_id: Option<TurnId>,
        goal: super::goal::model::Goal,
    },
    /// The thread's goal was removed.
    GoalCleared,
    Error {
        turn_id: TurnId,
        error: TurnError,
        will_retry: bool,
    },
    /// Exactly once per turn, last.
    TurnEnded {
        turn_id: TurnId,
        outcome: TurnOutcome,
        started_at: i64,
        completed_at: i64,
        duration_ms: i64,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// `final_items`: the agent messages of the last response, for `turn/completed`'s summary.
    Completed {
        final_items: Vec<TurnItem>,
    },
    Interrupted,
    Failed(TurnError),
}
