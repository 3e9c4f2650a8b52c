//! The events that map onto exactly one notification and need no projection state: the stream's
//! deltas, usage, rate limits, warnings, errors. [`super::ThreadProjection::project`] handles
//! the stateful events and hands every other one here.

use crate::core::EventMsg;
use crate::protocol::goal::{ThreadGoalClearedNotification, ThreadGoalUpdatedNotification};
use crate::protocol::mcp::McpToolCallProgressNotification;
use crate::protocol::notification::{
    ErrorNotification, FileChangePatchUpdatedNotification, ItemDeltaNotification,
    RateLimitSnapshot, RateLimitWindow, RateLimitsUpdatedNotification,
    ReasoningSummaryPartAddedNotification, ReasoningSummaryTextDeltaNotification,
    ReasoningTextDeltaNotification, ServerNotification, TerminalInteractionNotification,
    ThreadTokenUsage, TokenUsageUpdatedNotification, TurnDiffUpdatedNotification,
    WarningNotification,
};
use crate::protocol::turn::TurnPlanUpdatedNotification;

use super::super::convert;

/// The events that map onto exactly one notification and need no projection state (the stream's
/// deltas, usage, warnings, errors). `None` for the stateful ones, which
/// [`ThreadProjection::project`] handles before calling this; they are listed, not wildcarded, so
/// a new event kind cannot be dropped silently.
pub(super) fn one_to_one(thread_id: String, event: EventMsg) -> Option<ServerNotification> {
    let notification = match event {
        EventMsg::TurnDiff { turn_id, diff } => {
            ServerNotification::TurnDiffUpdated(TurnDiffUpdatedNotification {
                thread_id,
                turn_id: turn_id.into_string(),
                diff,
            })
        }
        EventMsg::PatchUpdated {
            turn_id,
            item_id,
            changes,
        } => ServerNotification::FileChangePatchUpdated(FileChangePatchUpdatedNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            changes: changes.iter().map(convert::file_change_out).collect(),
        }),
        EventMsg::AgentMessageDelta {
            turn_id,
            item_id,
            delta,
        } => ServerNotification::AgentMessageDelta(ItemDeltaNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            delta,
        }),
        EventMsg::ReasoningSummaryDelta {
            turn_id,
            item_id,
            delta,
            summary_index,
        } => ServerNotification::ReasoningSummaryTextDelta(ReasoningSummaryTextDeltaNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            delta,
            summary_index,
        }),
        EventMsg::ReasoningSummaryPartAdded {
            turn_id,
            item_id,
            summary_index,
        } => ServerNotification::ReasoningSummaryPartAdded(ReasoningSummaryPartAddedNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            summary_index,
        }),
        EventMsg::ReasoningRawDelta {
            turn_id,
            item_id,
            delta,
            content_index,
        } => ServerNotification::ReasoningTextDelta(ReasoningTextDeltaNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            delta,
            content_index,
        }),
        EventMsg::TokenCount {
            turn_id,
            total,
            last,
            model_context_window,
        } => ServerNotification::TokenUsageUpdated(TokenUsageUpdatedNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            token_usage: ThreadTokenUsage {
                total: convert::usage(&total),
                last: convert::usage(&last),
                model_context_window,
            },
        }),
        EventMsg::RateLimits { snapshot, .. } => {
            ServerNotification::RateLimitsUpdated(rate_limits(snapshot))
        }
        EventMsg::PlanDelta {
            turn_id,
            item_id,
            delta,
        } => ServerNotification::PlanDelta(ItemDeltaNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            delta,
        }),
        EventMsg::PlanUpdated {
            turn_id,
            explanation,
            plan,
        } => ServerNotification::TurnPlanUpdated(TurnPlanUpdatedNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            explanation,
            plan: plan.iter().map(convert::plan_step).collect(),
        }),
        EventMsg::CommandOutputDelta {
            turn_id,
            item_id,
            delta,
        } => ServerNotification::CommandExecutionOutputDelta(ItemDeltaNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            delta,
        }),
        EventMsg::TerminalInteraction {
            turn_id,
            item_id,
            process_id,
            stdin,
        } => ServerNotification::TerminalInteraction(TerminalInteractionNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            process_id,
            stdin,
        }),
        EventMsg::Warning { message } => ServerNotification::Warning(WarningNotification {
            message,
            thread_id: Some(thread_id),
        }),
        EventMsg::GoalUpdated { turn_id, goal } => {
            ServerNotification::ThreadGoalUpdated(ThreadGoalUpdatedNotification {
                goal: convert::goal(&thread_id, &goal),
                thread_id,
                turn_id: turn_id.map(|id| id.into_string()),
            })
        }
        EventMsg::GoalCleared => {
            ServerNotification::ThreadGoalCleared(ThreadGoalClearedNotification { thread_id })
        }
        EventMsg::Error {
            turn_id,
            error,
            will_retry,
        } => ServerNotification::Error(ErrorNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            error: convert::turn_error(&error),
            will_retry,
        }),
        EventMsg::McpStartupStatus { server, state } => {
            ServerNotification::McpServerStartupStatusUpdated(convert::mcp_startup_status(
                thread_id, server, &state,
            ))
        }
        EventMsg::McpToolCallProgress {
            turn_id,
            item_id,
            message,
        } => ServerNotification::McpToolCallProgress(McpToolCallProgressNotification {
            thread_id,
            turn_id: turn_id.into_string(),
            item_id: item_id.into_string(),
            message,
        }),
        EventMsg::TurnStarted { .. }
        | EventMsg::ItemStarted { .. }
        | EventMsg::ItemCompleted { .. }
        | EventMsg::WaitingOnClient { .. }
        | EventMsg::ModelRerouted { .. }
        | EventMsg::TurnEnded { .. }
        | EventMsg::ClientRequest(_) => return None,
    };
    Some(notification)
}

fn rate_limits(
    snapshot: Option<crate::core::event::RateLimitSnapshot>,
) -> RateLimitsUpdatedNotification {
    let window = |w: &crate::core::event::RateLimitWindow| RateLimitWindow {
        used_percent: w.used_percent.round() as i64,
        window_duration_mins: w.window_minutes,
        resets_at: w.resets_at,
    };
    let snapshot = snapshot.unwrap_or_default();
    RateLimitsUpdatedNotification {
        rate_limits: RateLimitSnapshot {
            limit_id: Some("codex".to_string()),
            limit_name: None,
            primary: snapshot.primary.as_ref().map(window),
            secondary: snapshot.secondary.as_ref().map(window),
            credits: None,
            plan_type: None,
            normal_model_slug: None,
            individual_limit: None,
            spend_control_reached: None,
            rate_limit_reached_type: None,
        },
    }
}
