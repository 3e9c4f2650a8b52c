//! `thread/items/list`: a thread's items, read from its rollout, in pages.
//!
//! Cursors are item positions in the (optionally turn-filtered) list, as decimal strings. A
//! thread's history only grows at its end, so a position keeps naming the same item while the
//! thread goes on. A cursor names where the next page starts, inclusively: ascending pages run
//! from it forward, descending pages from it backward — which is what `itemsBackwardsCursor` of
//! `thread/resume` needs (its first descending page holds the newest item).

use crate::core::{ThreadId, TurnId};
use crate::protocol::thread_items::{
    SortDirection, ThreadItemEntry, ThreadItemsListAnchor, ThreadItemsListCursor,
    ThreadItemsListParams, ThreadItemsListResponse,
};
use crate::rollout::RolloutContents;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::history::turns_page;
use super::thread_read::{blocking, find_entry, load_contents};

pub(crate) async fn thread_items_list(
    context: &ServerContext,
    params: ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let loaded = context.threads.get(&thread_id).ok();
    if loaded.as_ref().is_some_and(|thread| thread.ephemeral) {
        return Err(HandlerError::InvalidRequest(
            "ephemeral threads have no stored items to list".to_string(),
        ));
    }
    let entry = find_entry(context, thread_id.as_str())
        .await?
        .ok_or_else(|| HandlerError::InvalidRequest(format!("thread not found: {thread_id}")))?;
    let contents = load_contents(Some(entry.path.clone())).await?;
    let active = loaded.and_then(|thread| thread.active_turn_id());
    blocking(move || {
        let entries = item_entries(
            &contents,
            active.as_ref().map(TurnId::as_str),
            params.turn_id.as_deref(),
        )?;
        page(&entries, &params)
    })
    .await?
}

/// The newest item's cursor, for `thread/resume`'s `itemsBackwardsCursor`; `None` without items.
pub(crate) fn newest_item_cursor(
    contents: &RolloutContents,
    active_turn_id: Option<&str>,
) -> Result<Option<String>, HandlerError> {
    let entries = item_entries(contents, active_turn_id, None)?;
    Ok(entries.len().checked_sub(1).map(|last| last.to_string()))
}

/// Every item of the thread (or of one turn), oldest first, with its turn.
fn item_entries(
    contents: &RolloutContents,
    active_turn_id: Option<&str>,
    turn_id: Option<&str>,
) -> Result<Vec<ThreadItemEntry>, HandlerError> {
    let turns = turns_page(
        &contents.items,
        &contents.item_times_ms,
        active_turn_id,
        None,
        None,
    )?
    .turns;
    if let Some(wanted) = turn_id {
        if !turns.iter().any(|turn| turn.id == wanted) {
            return Err(HandlerError::InvalidRequest(format!(
                "turn not found: {wanted}"
            )));
        }
    }
    Ok(turns
        .into_iter()
        .filter(|turn| turn_id.is_none_or(|wanted| turn.id == wanted))
        .flat_map(|turn| {
            let turn_id = turn.id;
            turn.items.into_iter().map(move |item| ThreadItemEntry {
                turn_id: turn_id.clone(),
                started_at_ms: item.started_at_ms,
                completed_at_ms: item.completed_at_ms,
                item,
            })
        })
        .collect())
}

/// One page of `entries` as the params ask.
fn page(
    entries: &[ThreadItemEntry],
    params: &ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, HandlerError> {
    let descending = params.sort_direction == Some(SortDirection::Desc);
    let limit = match params.limit {
        Some(0) => {
            return Err(HandlerError::InvalidParams(
                "`limit` must be at least 1".to_string(),
            ))
        }
        Some(limit) => limit as usize,
        None => entries.len().max(1),
    };
    let len = entries.len() as i64;
    // The first position of the page (inclusive); may lie outside the list (an empty page).
    let start: i64 = match &params.cursor {
        None if descending => len - 1,
        None => 0,
        Some(ThreadItemsListCursor::Cursor(cursor)) => cursor
            .parse::<i64>()
            .ok()
            .filter(|position| (-1..=len).contains(position))
            .ok_or_else(|| {
                HandlerError::InvalidParams(format!("`cursor`: invalid cursor `{cursor}`"))
            })?,
        Some(ThreadItemsListCursor::Anchor(ThreadItemsListAnchor::Item { item_id })) => {
            if params.turn_id.as_deref().is_none_or(str::is_empty) {
                return Err(HandlerError::InvalidParams(
                    "`cursor`: an item anchor requires `turnId`".to_string(),
                ));
            }
            let at = entries
                .iter()
                .position(|entry| entry.item.id() == item_id)
                .ok_or_else(|| {
                    HandlerError::InvalidParams(format!(
                        "`cursor`: item `{item_id}` is not in that turn"
                    ))
                })? as i64;
            if descending {
                at - 1
            } else {
                at + 1
            }
        }
    };
    let step = limit as i64;
    let (data, next, backwards): (Vec<ThreadItemEntry>, i64, i64) = if descending {
        let low = (start - step + 1).max(0);
        let high = start.min(len - 1);
        let data = if high >= low {
            entries[low as usize..=high as usize]
                .iter()
                .rev()
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        (data, low - 1, high + 1)
    } else {
        let low = start.max(0);
        let high = (start + step).min(len);
        let data = if high > low {
            entries[low as usize..high as usize].to_vec()
        } else {
            Vec::new()
        };
        (data, high, low - 1)
    };
    let next_cursor = if descending {
        (next >= 0).then(|| next.to_string())
    } else {
        (next < len).then(|| next.to_string())
    };
    let backwards_cursor = if data.is_empty() {
        None
    } else if descending {
        (backwards < len).then(|| backwards.to_string())
    } else {
        (backwards >= 0).then(|| backwards.to_string())
    };
    Ok(ThreadItemsListResponse {
        data,
        next_cursor,
        backwards_cursor,
    })
}

handler!(ThreadItemsList, |context, params| thread_items_list(
    context, params
)
.await);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::item::{ThreadItem, ThreadItemDetails};

    fn entries(n: usize) -> Vec<ThreadItemEntry> {
        (0..n)
            .map(|i| ThreadItemEntry {
                turn_id: format!("t{}", i / 2),
                item: ThreadItem {
                    details: ThreadItemDetails::Plan {
                        id: format!("i{i}"),
                        text: String::new(),
                    },
                    started_at_ms: None,
                    completed_at_ms: None,
                },
                started_at_ms: None,
                completed_at_ms: None,
            })
            .collect()
    }

    fn params(
        cursor: Option<ThreadItemsListCursor>,
        limit: Option<u32>,
        direction: Option<SortDirection>,
    ) -> ThreadItemsListParams {
        ThreadItemsListParams {
            thread_id: "t".into(),
            turn_id: Some("t1".into()),
            cursor,
            limit,
            sort_direction: direction,
            defer_output: None,
        }
    }

    fn ids(response: &ThreadItemsListResponse) -> Vec<&str> {
        response.data.iter().map(|e| e.item.id()).collect()
    }

    #[test]
    fn ascending_pages_cover_every_item_once_and_descending_starts_at_the_newest() {
        let all = entries(5);
        let mut seen = Vec::new();
        let mut cursor = None;
        for _ in 0..10 {
            let response = page(&all, &params(cursor.clone(), Some(2), None)).unwrap();
            seen.extend(ids(&response).into_iter().map(str::to_string));
            match response.next_cursor {
                Some(next) => cursor = Some(ThreadItemsListCursor::Cursor(next)),
                None => break,
            }
        }
        assert_eq!(seen, vec!["i0", "i1", "i2", "i3", "i4"]);

        let newest = page(
            &all,
            &params(
                Some(ThreadItemsListCursor::Cursor("4".into())),
                Some(1),
                Some(SortDirection::Desc),
            ),
        )
        .unwrap();
        assert_eq!(ids(&newest), vec!["i4"]);
        assert_eq!(newest.next_cursor.as_deref(), Some("3"));
        let back = page(&all, &params(None, Some(3), Some(SortDirection::Desc))).unwrap();
        assert_eq!(ids(&back), vec!["i4", "i3", "i2"]);
        // Reversing from a descending page continues after its newest item: nothing.
        assert_eq!(back.backwards_cursor, None);
    }

    #[test]
    fn anchors_are_exclusive_and_bad_cursors_are_refused() {
        let all = entries(5);
        let anchor = |id: &str| {
            Some(ThreadItemsListCursor::Anchor(ThreadItemsListAnchor::Item {
                item_id: id.into(),
            }))
        };
        let after = page(&all, &params(anchor("i1"), Some(2), None)).unwrap();
        assert_eq!(ids(&after), vec!["i2", "i3"]);
        let before = page(&all, &params(anchor("i1"), None, Some(SortDirection::Desc))).unwrap();
        assert_eq!(ids(&before), vec!["i0"]);
        assert!(page(&all, &params(anchor("nope"), None, None)).is_err());
        assert!(page(
            &all,
            &params(Some(ThreadItemsListCursor::Cursor("x".into())), None, None)
        )
        .is_err());
        assert!(page(&all, &params(None, Some(0), None)).is_err());
        let empty = page(&[], &params(None, None, Some(SortDirection::Desc))).unwrap();
        assert!(empty.data.is_empty() && empty.next_cursor.is_none());
    }
}
