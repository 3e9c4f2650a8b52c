//! Turns rebuilt from a rollout's lines, for `thread/read`, `thread/resume` and `thread/fork`,
//! and paged so a client never has to take one huge line. Reading the persisted lines (rather
//! than live state) means a thread reads the same before and after a daemon restart.

use std::collections::HashMap;

use crate::core::record::{ItemTimes, StoredTurnItem, TurnRecord};
use crate::protocol::item::ThreadItemDetails;
use crate::protocol::notification::{ThreadTokenUsage, TokenUsageUpdatedNotification};
use crate::protocol::turn::Turn;
use crate::rollout::RolloutItem;

use super::convert;
use super::errors::HandlerError;
use super::turn_builder::{ItemsView, TurnBuilder};

/// A turn rebuilt from its lines, its items still in stored form: converting them is most of
/// the work, so a page converts only the turns it returns.
struct TurnSkeleton<'a> {
    turn: TurnBuilder,
    /// Each stored item with when it started and completed (Unix ms), if known.
    items: Vec<(StoredTurnItem<'a>, Option<ItemTimes>)>,
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
    for (index, line) in items.iter().enumerate() {
        if let RolloutItem::HistoryReverted { before_turn_id, .. } = line {
            // The reverted turn and every later one are gone; their late lines attach nowhere.
            if let Some(&at) = by_id.get(before_turn_id.as_str()) {
                turns.truncate(at);
                by_id.retain(|_, position| *position < at);
            }
            continue;
        }
        match TurnRecord::read(line) {
            Some(TurnRecord::Started {
                turn_id,
                started_at,
            }) => {
                by_id.insert(turn_id, turns.len());
                let mut turn = TurnBuilder::started(turn_id, Some(started_at));
                // A turn without an end is `inProgress` when it is the thread's running turn;
                // otherwise it was cut short (a crash).
                if active_turn_id != Some(turn_id) {
                    turn.cut_short();
                }
                turns.push(TurnSkeleton {
                    turn,
                    items: Vec::new(),
                });
            }
            Some(TurnRecord::Item {
                turn_id,
                item,
                times,
            }) => {
                if let Some(&at) = by_id.get(turn_id) {
                    // The times core stamped live and stored with the item; a line written
                    // before they were stored is written when its item completes, so its write
                    // time stands for both ends (the reference always has both).
                    let times = times.or_else(|| {
                        item_times_ms
                            .get(index)
                            .copied()
                            .flatten()
                            .map(|written| ItemTimes {
                                started_at_ms: written,
                                completed_at_ms: written,
                            })
                    });
                    turns[at].items.push((item, times));
                }
            }
            Some(TurnRecord::Ended(end)) => {
                if let Some(&at) = by_id.get(end.turn_id.as_str()) {
                    turns[at].turn.ended(&end);
                }
            }
            None => {}
        }
    }
    turns
}

fn finish(skeleton: TurnSkeleton<'_>) -> Turn {
    let items = skeleton
        .items
        .into_iter()
        .filter_map(|(stored, times)| {
            stored.decode().map(|item| {
                convert::thread_item(
                    &item,
                    times.map(|t| t.started_at_ms),
                    times.map(|t| t.completed_at_ms),
                )
            })
        })
        .collect();
    skeleton.turn.build(ItemsView::Full, items)
}

/// Rebuilds every turn of a thread (a turn without an end reads `inProgress` when it is
/// `active_turn_id`, else `interrupted`).
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
            .position(|t| t.turn.id() == cursor)
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

/// Rebuilds the turns `select` picks: it sees every turn's id in order and gives the positions
/// to convert, in the order they are returned. Only those turns' items are converted, and only
/// as far as `view` asks (a summary keeps the user's and the agent's messages).
pub(crate) fn selected_turns<E>(
    items: &[RolloutItem],
    item_times_ms: &[Option<i64>],
    active_turn_id: Option<&str>,
    view: ItemsView,
    select: impl FnOnce(&[&str]) -> Result<Vec<usize>, E>,
) -> Result<Vec<Turn>, E> {
    let skeletons = skeletons(items, item_times_ms, active_turn_id);
    let ids: Vec<&str> = skeletons.iter().map(|s| s.turn.id()).collect();
    let positions = select(&ids)?;
    drop(ids);
    let mut slots: Vec<Option<TurnSkeleton<'_>>> = skeletons.into_iter().map(Some).collect();
    Ok(positions
        .into_iter()
        .filter_map(|at| slots.get_mut(at).and_then(Option::take))
        .map(|skeleton| match view {
            ItemsView::Full => finish(skeleton),
            ItemsView::NotLoaded => skeleton.turn.build(ItemsView::NotLoaded, Vec::new()),
            ItemsView::Summary => {
                let mut turn = finish(skeleton);
                turn.items.retain(|item| {
                    matches!(
                        item.details,
                        ThreadItemDetails::UserMessage { .. }
                            | ThreadItemDetails::AgentMessage { .. }
                    )
                });
                turn.items_view = ItemsView::Summary.as_str().to_string();
                turn
            }
        })
        .collect())
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
    use crate::protocol::turn::TurnStatus;
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
            started_at_ms: None,
            completed_at_ms: None,
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
