//! Turns rebuilt from a rollout's lines, for `thread/read`, `thread/resume` and `thread/fork`,
//! and paged so a client never has to take one huge line. Reading the persisted lines (rather
//! than live state) means a thread reads the same before and after a daemon restart.

use crate::core;
use crate::protocol::notification::{ThreadTokenUsage, TokenUsageUpdatedNotification};
use crate::protocol::turn::{Turn, TurnStatus};
use crate::rollout::RolloutItem;

use super::convert;
use super::errors::HandlerError;

/// Rebuilds the turns of a thread. A turn without an end is `inProgress` when it is the thread's
/// running turn (`active_turn_id`), otherwise it was cut short (a crash) and reads `interrupted`.
pub fn turns_from_items(items: &[RolloutItem], active_turn_id: Option<&str>) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for item in items {
        match item {
            RolloutItem::TurnStarted {
                turn_id,
                started_at,
            } => turns.push(Turn {
                id: turn_id.clone(),
                root_turn_id: Some(turn_id.clone()),
                items: Vec::new(),
                items_view: "full".to_string(),
                status: if active_turn_id == Some(turn_id.as_str()) {
                    TurnStatus::InProgress
                } else {
                    TurnStatus::Interrupted
                },
                error: None,
                started_at: Some(*started_at),
                completed_at: None,
                duration_ms: None,
            }),
            RolloutItem::TurnItem { turn_id, item } => {
                let Some(turn) = turns.iter_mut().rev().find(|t| &t.id == turn_id) else {
                    continue;
                };
                match serde_json::from_value::<core::TurnItem>(item.clone()) {
                    Ok(item) => turn.items.push(convert::thread_item(&item, None, None)),
                    Err(error) => tracing::debug!(%error, "stored turn item of an unknown kind"),
                }
            }
            RolloutItem::TurnEnded {
                turn_id,
                status,
                error,
                completed_at,
            } => {
                let Some(turn) = turns.iter_mut().rev().find(|t| &t.id == turn_id) else {
                    continue;
                };
                end_turn(turn, status, error.as_ref(), *completed_at);
            }
            _ => {}
        }
    }
    turns
}

fn end_turn(turn: &mut Turn, status: &str, error: Option<&serde_json::Value>, completed_at: i64) {
    turn.status = match status {
        "completed" => TurnStatus::Completed,
        "failed" => TurnStatus::Failed,
        _ => TurnStatus::Interrupted,
    };
    turn.error = error
        .and_then(|value| serde_json::from_value::<core::TurnError>(value.clone()).ok())
        .map(|error| convert::turn_error(&error));
    turn.completed_at = Some(completed_at);
    turn.duration_ms = turn
        .started_at
        .map(|started| (completed_at - started).max(0) * 1000);
}

/// The thread's last persisted token usage, as the notification a resume sends after its
/// response; `None` for a thread that never finished a response (or predates usage lines).
pub fn last_token_usage(
    thread_id: &str,
    items: &[RolloutItem],
) -> Option<TokenUsageUpdatedNotification> {
    items.iter().rev().find_map(|item| match item {
        RolloutItem::TokenUsage {
            turn_id,
            total,
            last,
            model_context_window,
        } => Some(TokenUsageUpdatedNotification {
            thread_id: thread_id.to_string(),
            turn_id: turn_id.clone(),
            token_usage: ThreadTokenUsage {
                total: convert::usage(total),
                last: convert::usage(last),
                model_context_window: *model_context_window,
            },
        }),
        _ => None,
    })
}

/// A page of turns, oldest first, and the cursor for the turns before it.
pub struct TurnsPage {
    pub turns: Vec<Turn>,
    pub backwards_cursor: Option<String>,
}

/// The newest `limit` turns before `cursor` (a turn id from an earlier page), oldest first.
pub fn page_turns(
    mut turns: Vec<Turn>,
    limit: Option<u32>,
    cursor: Option<&str>,
) -> Result<TurnsPage, HandlerError> {
    if let Some(cursor) = cursor {
        let end = turns
            .iter()
            .position(|turn| turn.id == cursor)
            .ok_or_else(|| HandlerError::InvalidRequest(format!("invalid cursor: {cursor}")))?;
        turns.truncate(end);
    }
    let Some(limit) = limit.map(|l| l.max(1) as usize) else {
        return Ok(TurnsPage {
            turns,
            backwards_cursor: None,
        });
    };
    let start = turns.len().saturating_sub(limit);
    let page = turns.split_off(start);
    let backwards_cursor = if start > 0 {
        page.first().map(|turn| turn.id.clone())
    } else {
        None
    };
    Ok(TurnsPage {
        turns: page,
        backwards_cursor,
    })
}
