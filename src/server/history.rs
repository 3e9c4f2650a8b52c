//! Turns rebuilt from a rollout's lines, for `thread/read`, `thread/resume` and `thread/fork`,
//! and paged so a client never has to take one huge line. Reading the persisted lines (rather
//! than live state) means a thread reads the same before and after a daemon restart.

use std::collections::HashMap;

use serde::Deserialize;

use crate::core;
use crate::protocol::notification::{ThreadTokenUsage, TokenUsageUpdatedNotification};
use crate::protocol::turn::{Turn, TurnStatus};
use crate::rollout::RolloutItem;

use super::convert;
use super::errors::HandlerError;

/// A turn rebuilt from its lines, its items still in stored form: converting them is most of
/// the work, so a page converts only the turns it returns.
struct TurnSkeleton<'a> {
    turn: Turn,
    /// Each stored item with its line's write time (Unix ms), if known.
    items: Vec<(&'a serde_json::Value, Option<i64>)>,
}

/// One pass over the lines; a turn id maps to its turn through a table, so lines of a turn that
/// is not the latest (or of no known turn) cost the same as any other line.
fn skeletons<'a>(
    items: &'a [RolloutItem],
    item_times_ms: &[Option<i64>],
    active_turn_id: Option<&str>,
) -> Vec<TurnSkeleton<'a>> {
    let mut turns: Vec<TurnSkeleton<'a>> = Vec::new();
    let mut by_id: HashMap<&'a str, usize> = HashMap::new();
    for (index, item) in items.iter().enumerate() {
        match item {
            RolloutItem::TurnStarted {
                turn_id,
                started_at,
            } => {
                by_id.insert(turn_id.as_str(), turns.len());
                turns.push(TurnSkeleton {
                    turn: started_turn(turn_id, *started_at, active_turn_id),
                    items: Vec::new(),
                });
            }
            RolloutItem::TurnItem { turn_id, item } => {
                if let Some(&at) = by_id.get(turn_id.as_str()) {
                    let written = item_times_ms.get(index).copied().flatten();
                    turns[at].items.push((item, written));
                }
            }
            RolloutItem::TurnEnded {
                turn_id,
                status,
                error,
                completed_at,
                duration_ms,
            } => {
                if let Some(&at) = by_id.get(turn_id.as_str()) {
                    let end = TurnEndLine {
                        status,
                        error: error.as_ref(),
                        completed_at: *completed_at,
                        duration_ms: *duration_ms,
                    };
                    end_turn(&mut turns[at].turn, end);
                }
            }
            _ => {}
        }
    }
    turns
}

/// A turn without an end is `inProgress` when it is the thread's running turn, otherwise it
/// was cut short (a crash) and reads `interrupted` until its end line says otherwise.
fn started_turn(turn_id: &str, started_at: i64, active_turn_id: Option<&str>) -> Turn {
    Turn {
        id: turn_id.to_string(),
        root_turn_id: Some(turn_id.to_string()),
        items: Vec::new(),
        items_view: "full".to_string(),
        status: if active_turn_id == Some(turn_id) {
            TurnStatus::InProgress
        } else {
            TurnStatus::Interrupted
        },
        error: None,
        started_at: Some(started_at),
        completed_at: None,
        duration_ms: None,
    }
}

fn finish(skeleton: TurnSkeleton<'_>) -> Turn {
    let mut turn = skeleton.turn;
    turn.items = skeleton
        .items
        .into_iter()
        .filter_map(
            |(value, written)| match core::TurnItem::deserialize(value) {
                // Core's stored items carry no times; an item's line is written when it completes,
                // so its write time stands for both ends (the reference always has both).
                Ok(item) => Some(convert::thread_item(&item, written, written)),
                Err(error) => {
                    tracing::debug!(%error, "stored turn item of an unknown kind");
                    None
                }
            },
        )
        .collect();
    turn
}

/// Rebuilds every turn of a thread (see [`started_turn`] for turns without an end).
pub(crate) fn turns_from_items(
    items: &[RolloutItem],
    item_times_ms: &[Option<i64>],
    active_turn_id: Option<&str>,
) -> Vec<Turn> {
    skeletons(items, item_times_ms, active_turn_id)
        .into_iter()
        .map(finish)
        .collect()
}

/// Rebuilds one page of turns: the newest `limit` before `cursor` (a turn id from an earlier
/// page), oldest first. Only the returned turns' items are converted.
pub(crate) fn turns_page(
    items: &[RolloutItem],
    item_times_ms: &[Option<i64>],
    active_turn_id: Option<&str>,
    limit: Option<u32>,
    cursor: Option<&str>,
) -> Result<TurnsPage, HandlerError> {
    let mut turns = skeletons(items, item_times_ms, active_turn_id);
    if let Some(cursor) = cursor {
        let end = turns
            .iter()
            .position(|t| t.turn.id == cursor)
            .ok_or_else(|| HandlerError::InvalidRequest(format!("invalid cursor: {cursor}")))?;
        turns.truncate(end);
    }
    let start = match limit {
        Some(limit) => turns.len().saturating_sub(limit.max(1) as usize),
        None => 0,
    };
    let page: Vec<Turn> = turns.split_off(start).into_iter().map(finish).collect();
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

/// A rollout's end line of one turn.
struct TurnEndLine<'a> {
    status: &'a str,
    error: Option<&'a serde_json::Value>,
    completed_at: i64,
    duration_ms: Option<i64>,
}

fn end_turn(turn: &mut Turn, end: TurnEndLine<'_>) {
    turn.status = match end.status {
        "completed" => TurnStatus::Completed,
        "failed" => TurnStatus::Failed,
        _ => TurnStatus::Interrupted,
    };
    turn.error = end
        .error
        .and_then(|value| serde_json::from_value::<core::TurnError>(value.clone()).ok())
        .map(|error| convert::turn_error(&error));
    turn.completed_at = Some(end.completed_at);
    // The recorded duration is the one `turn/completed` reported; only lines written before it
    // was recorded fall back to the whole seconds between the two timestamps.
    turn.duration_ms = end.duration_ms.or_else(|| {
        turn.started_at
            .map(|started| (end.completed_at - started).max(0).saturating_mul(1000))
    });
}

/// The thread's last persisted token usage, as the notification a resume sends after its
/// response; `None` for a thread that never finished a response (or predates usage lines).
pub(crate) fn last_token_usage(
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
pub(crate) struct TurnsPage {
    pub(crate) turns: Vec<Turn>,
    pub(crate) backwards_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn started(turn_id: &str) -> RolloutItem {
        RolloutItem::TurnStarted {
            turn_id: turn_id.to_string(),
            started_at: 1,
        }
    }

    fn message(turn_id: &str, text: &str) -> RolloutItem {
        RolloutItem::TurnItem {
            turn_id: turn_id.to_string(),
            item: json!({"type": "agent_message", "id": text, "text": text}),
        }
    }

    #[test]
    fn lines_of_an_earlier_turn_attach_to_it_and_pages_count_from_the_newest() {
        let items = vec![
            started("a"),
            started("b"),
            message("a", "late for a"),
            message("b", "for b"),
            message("gone", "for no turn"),
            started("c"),
        ];
        let turns = turns_from_items(&items, &[], Some("c"));
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[0].items.len(), 1);
        assert_eq!(turns[1].items.len(), 1);
        assert_eq!(turns[2].status, TurnStatus::InProgress);
        let page = turns_page(&items, &[], None, Some(2), None).unwrap();
        let ids: Vec<&str> = page.turns.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["b", "c"]);
        assert_eq!(page.backwards_cursor.as_deref(), Some("b"));
        let before = turns_page(&items, &[], None, Some(2), Some("b")).unwrap();
        assert_eq!(before.turns.len(), 1);
        assert_eq!(before.backwards_cursor, None);
    }
}
