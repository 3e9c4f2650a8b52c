//! `thread/turns/list`: a stored thread's turns in pages, rebuilt from its rollout (loaded or
//! not), newest first unless the client asks otherwise.
//!
//! Cursors are this server's own: `after:<turn id>` continues past a turn, `at:<turn id>` starts
//! at one (what a backwards cursor needs, so the anchor turn is seen again with its updates).

use crate::core::{ThreadId, TurnId};
use crate::protocol::thread::SortDirection;
use crate::protocol::thread_turns::{
    ThreadTurnsListParams, ThreadTurnsListResponse, TurnItemsView,
};
use crate::rollout::RolloutItem;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::history::selected_turns;
use super::super::turn_builder::ItemsView;
use super::thread_read::{blocking, find_entry, load_contents};

pub(crate) async fn thread_turns_list(
    context: &ServerContext,
    params: ThreadTurnsListParams,
) -> Result<ThreadTurnsListResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let loaded = context.threads.get(&thread_id).ok();
    let entry = match &loaded {
        Some(thread) if thread.ephemeral => None,
        _ => find_entry(context, thread_id.as_str()).await?,
    };
    let Some(entry) = entry else {
        return Err(match loaded {
            Some(_) => not_materialized(&thread_id),
            None => HandlerError::InvalidRequest(format!("thread not loaded: {thread_id}")),
        });
    };
    let active = loaded.as_ref().and_then(|t| t.active_turn_id());
    let contents = load_contents(Some(entry.path)).await?;
    // The reference writes a thread's file with its first message and refuses a live thread
    // without one; openturn writes it at the start, so a live thread with no turn yet is
    // answered the same way rather than with an empty page.
    let has_turns = contents
        .items
        .iter()
        .any(|item| matches!(item, RolloutItem::TurnStarted { .. }));
    if loaded.is_some() && !has_turns {
        return Err(not_materialized(&thread_id));
    }
    let view = match params.items_view.unwrap_or(TurnItemsView::Summary) {
        TurnItemsView::NotLoaded => ItemsView::NotLoaded,
        TurnItemsView::Summary => ItemsView::Summary,
        TurnItemsView::Full => ItemsView::Full,
    };
    let descending = params.sort_direction != Some(SortDirection::Asc);
    let mut next_cursor = None;
    let turns = blocking(move || {
        selected_turns(
            &contents.items,
            &contents.item_times_ms,
            active.as_ref().map(TurnId::as_str),
            view,
            |ids| {
                let (positions, more) =
                    page_positions(ids, descending, params.cursor.as_deref(), params.limit)?;
                next_cursor = more;
                Ok::<_, HandlerError>(positions)
            },
        )
        .map(|turns| (turns, next_cursor))
    })
    .await??;
    let (data, next_cursor) = turns;
    let backwards_cursor = data.first().map(|turn| format!("at:{}", turn.id));
    Ok(ThreadTurnsListResponse {
        data,
        next_cursor,
        backwards_cursor,
    })
}

/// The reference's refusal for a live thread that has no message yet.
fn not_materialized(thread_id: &ThreadId) -> HandlerError {
    HandlerError::InvalidRequest(format!(
        "thread {thread_id} is not materialized yet; thread/turns/list is unavailable before first user message"
    ))
}

/// The positions (into `ids`, oldest first) of one page, in the page's order, and the cursor
/// that continues after it when anything is left.
fn page_positions(
    ids: &[&str],
    descending: bool,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<(Vec<usize>, Option<String>), HandlerError> {
    let order: Vec<usize> = if descending {
        (0..ids.len()).rev().collect()
    } else {
        (0..ids.len()).collect()
    };
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let invalid = || HandlerError::InvalidRequest(format!("invalid cursor: {cursor}"));
            let (inclusive, turn_id) = match cursor.split_once(':') {
                Some(("at", id)) => (true, id),
                Some(("after", id)) => (false, id),
                _ => return Err(invalid()),
            };
            let at = order
                .iter()
                .position(|&i| ids[i] == turn_id)
                .ok_or_else(invalid)?;
            if inclusive {
                at
            } else {
                at + 1
            }
        }
    };
    let take = limit.map_or(usize::MAX, |l| l.max(1) as usize);
    let page: Vec<usize> = order.iter().skip(start).take(take).copied().collect();
    let more = start + page.len() < order.len();
    let next = match page.last() {
        Some(&last) if more => Some(format!("after:{}", ids[last])),
        _ => None,
    };
    Ok((page, next))
}

handler!(ThreadTurnsList, |context, params| thread_turns_list(
    context, params
)
.await);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_both_ways_and_a_backwards_cursor_includes_its_anchor() {
        let ids = ["a", "b", "c", "d"];
        let (first, next) = page_positions(&ids, true, None, Some(3)).unwrap();
        assert_eq!((first, next.as_deref()), (vec![3, 2, 1], Some("after:b")));
        let (rest, end) = page_positions(&ids, true, Some("after:b"), Some(3)).unwrap();
        assert_eq!((rest, end), (vec![0], None));
        let (back, _) = page_positions(&ids, false, Some("at:b"), None).unwrap();
        assert_eq!(back, vec![1, 2, 3]);
        for bad in ["b", "after:zz", "near:b"] {
            assert!(
                page_positions(&ids, true, Some(bad), None).is_err(),
                "{bad}"
            );
        }
    }
}
