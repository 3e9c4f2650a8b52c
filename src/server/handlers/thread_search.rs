//! `thread/search`: finds stored threads whose name, first message or conversation contains a
//! text, newest first, in pages.
//!
//! Bounded per request (docs/PROTOCOL.md says the same): at most [`SEARCH_BYTE_BUDGET`] bytes of
//! rollouts read, [`PER_THREAD_BYTES`] of any one, [`MAX_THREADS_EXAMINED`] threads looked at and
//! [`SEARCH_TIME_BUDGET`] spent. When a bound stops the search before the page is full, the
//! answer carries the results so far and a `nextCursor` after the last thread looked at, so the
//! client continues where this request stopped; no request can keep the daemon busy for long.

use std::cmp::Ordering;
use std::time::{Duration, Instant};

use crate::core::ThreadId;
use crate::protocol::thread::{SortDirection, ThreadListParams, ThreadStatus};
use crate::protocol::thread_search::{
    ThreadSearchParams, ThreadSearchResponse, ThreadSearchResult, ThreadSearchSortKey,
};
use crate::rollout::search::search_thread;
use crate::rollout::IndexEntry;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::thread_object::thread_from_entry;
use super::thread_read::{matches_filters, parse_cursor};

/// Rollout bytes one request may read in all.
pub(crate) const SEARCH_BYTE_BUDGET: u64 = 64 * 1024 * 1024;
/// Rollout bytes read of any one thread (its start: where its topic is set).
pub(crate) const PER_THREAD_BYTES: u64 = 8 * 1024 * 1024;
/// Threads one request may look at.
pub(crate) const MAX_THREADS_EXAMINED: usize = 2_000;
/// Time one request may spend searching; checked between threads.
pub(crate) const SEARCH_TIME_BUDGET: Duration = Duration::from_secs(2);
/// The longest search term, in bytes after trimming (the reference's bound).
const MAX_TERM_BYTES: usize = 65_536;
const DEFAULT_LIMIT: usize = 25;
const MAX_LIMIT: usize = 100;

/// How much one search may do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchBounds {
    pub(crate) bytes: u64,
    pub(crate) per_thread_bytes: u64,
    pub(crate) threads: usize,
    pub(crate) deadline: Instant,
}

pub(crate) async fn thread_search(
    context: &ServerContext,
    params: ThreadSearchParams,
) -> Result<ThreadSearchResponse, HandlerError> {
    let term = params.search_term.trim().to_lowercase();
    if term.is_empty() {
        return Err(HandlerError::InvalidParams(
            "searchTerm must not be empty".to_string(),
        ));
    }
    if params.search_term.trim().len() > MAX_TERM_BYTES {
        return Err(HandlerError::InvalidParams(format!(
            "searchTerm is longer than {MAX_TERM_BYTES} bytes"
        )));
    }
    let cursor = params.cursor.as_deref().map(parse_cursor).transpose()?;
    let limit = params
        .limit
        .map_or(DEFAULT_LIMIT, |l| (l as usize).clamp(1, MAX_LIMIT));
    let key = params.sort_key.unwrap_or(ThreadSearchSortKey::CreatedAt);
    let ascending = params.sort_direction == Some(SortDirection::Asc);
    let filters = ThreadListParams {
        archived: params.archived,
        source_kinds: params.source_kinds.clone(),
        ..ThreadListParams::default()
    };
    let index = context.threads.index().clone();
    let bounds = SearchBounds {
        bytes: SEARCH_BYTE_BUDGET,
        per_thread_bytes: PER_THREAD_BYTES,
        threads: MAX_THREADS_EXAMINED,
        deadline: Instant::now() + SEARCH_TIME_BUDGET,
    };
    let page = tokio::task::spawn_blocking(move || {
        let ordered = index.query(|entries| {
            let mut candidates: Vec<IndexEntry> = entries
                .values()
                .filter(|entry| matches_filters(entry, &filters))
                .filter(|entry| match &cursor {
                    Some((value, id)) => {
                        order(key, ascending, entry, (*value, id.as_str())) == Ordering::Greater
                    }
                    None => true,
                })
                .cloned()
                .collect();
            candidates.sort_by(|a, b| order(key, ascending, a, (sort_value(key, b), &b.id)));
            candidates
        })?;
        Ok::<_, crate::rollout::RolloutError>(search_entries(&ordered, &term, limit, bounds, key))
    })
    .await
    .map_err(|e| HandlerError::Internal(e.to_string()))??;
    let backwards_cursor = page
        .found
        .first()
        .map(|(entry, _)| format!("{}|{}", sort_value(key, entry), entry.id));
    let data: Vec<ThreadSearchResult> = page
        .found
        .into_iter()
        .map(|(entry, snippet)| {
            let status = ThreadId::parse(&entry.id)
                .map_or(ThreadStatus::NotLoaded, |id| context.status_of(&id));
            ThreadSearchResult {
                thread: thread_from_entry(&entry, status),
                snippet,
            }
        })
        .collect();
    Ok(ThreadSearchResponse {
        data,
        next_cursor: page.next_cursor,
        backwards_cursor,
    })
}

fn sort_value(key: ThreadSearchSortKey, entry: &IndexEntry) -> i64 {
    match key {
        ThreadSearchSortKey::CreatedAt => entry.created_at,
        _ => entry.updated_at_ms,
    }
}

/// `entry` against a (value, id) position in the requested direction.
fn order(
    key: ThreadSearchSortKey,
    ascending: bool,
    entry: &IndexEntry,
    other: (i64, &str),
) -> Ordering {
    let ordering = (sort_value(key, entry), entry.id.as_str()).cmp(&other);
    if ascending {
        ordering
    } else {
        ordering.reverse()
    }
}

/// One page of results and where the next one starts.
pub(crate) struct SearchPage {
    pub(crate) found: Vec<(IndexEntry, String)>,
    pub(crate) next_cursor: Option<String>,
}

/// Searches `ordered` in turn until `limit` matched, a bound is reached, or none are left.
pub(crate) fn search_entries(
    ordered: &[IndexEntry],
    term_lower: &str,
    limit: usize,
    bounds: SearchBounds,
    key: ThreadSearchSortKey,
) -> SearchPage {
    let mut found = Vec::new();
    let mut bytes_left = bounds.bytes;
    let mut examined = 0;
    for entry in ordered {
        // The first thread is always looked at, so every request makes progress.
        let out_of_bounds = examined > 0
            && (bytes_left == 0 || examined >= bounds.threads || Instant::now() >= bounds.deadline);
        if found.len() == limit || out_of_bounds {
            break;
        }
        examined += 1;
        if !entry.path.exists() {
            continue;
        }
        let result = search_thread(entry, term_lower, bounds.per_thread_bytes.min(bytes_left));
        bytes_left = bytes_left.saturating_sub(result.bytes_read);
        if let Some(snippet) = result.snippet {
            found.push((entry.clone(), snippet));
        }
    }
    let next_cursor = match (ordered.get(examined), examined.checked_sub(1)) {
        (Some(_), Some(last)) => {
            let last = &ordered[last];
            Some(format!("{}|{}", sort_value(key, last), last.id))
        }
        _ => None,
    };
    SearchPage { found, next_cursor }
}

handler!(ThreadSearch, |context, params| thread_search(
    context, params
)
.await);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::{RolloutItem, RolloutLine, SessionMeta};

    /// A thread whose one agent message is `text`.
    fn stored(dir: &std::path::Path, id: &str, text: &str) -> IndexEntry {
        let meta = SessionMeta {
            id: id.to_string(),
            created_at: 100,
            cwd: "/w".to_string(),
            model: "m".to_string(),
            model_provider: "p".to_string(),
            originator: None,
            cli_version: "0".to_string(),
            forked_from_id: None,
            source: None,
            settings: None,
        };
        let path = dir.join(format!("rollout-{id}.jsonl"));
        let message = RolloutLine::now(RolloutItem::TurnItem {
            turn_id: "t".into(),
            item: serde_json::json!({"type": "agent_message", "id": "m", "text": text}),
            started_at_ms: None,
            completed_at_ms: None,
        });
        std::fs::write(&path, serde_json::to_string(&message).unwrap() + "\n").unwrap();
        IndexEntry::from_meta(&meta, &path, false)
    }

    fn bounds(bytes: u64, threads: usize) -> SearchBounds {
        SearchBounds {
            bytes,
            per_thread_bytes: bytes,
            threads,
            deadline: Instant::now() + Duration::from_secs(60),
        }
    }

    #[test]
    fn a_bound_ends_the_page_early_with_a_cursor_to_continue_from() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<IndexEntry> = ["a", "b", "c", "d"]
            .iter()
            .map(|id| stored(dir.path(), id, &format!("needle in {id}")))
            .collect();
        let key = ThreadSearchSortKey::CreatedAt;
        let all = search_entries(&entries, "needle", 10, bounds(u64::MAX, 100), key);
        assert_eq!(all.found.len(), 4);
        assert_eq!(all.next_cursor, None);

        let full_page = search_entries(&entries, "needle", 2, bounds(u64::MAX, 100), key);
        assert_eq!(full_page.found.len(), 2);
        assert_eq!(full_page.next_cursor.as_deref(), Some("100|b"));

        let few_threads = search_entries(&entries, "needle", 10, bounds(u64::MAX, 3), key);
        assert_eq!(few_threads.found.len(), 3);
        assert_eq!(few_threads.next_cursor.as_deref(), Some("100|c"));

        // One file's worth of bytes: the first thread is searched whole, then the budget is
        // spent and the search stops there.
        let one_file = std::fs::metadata(&entries[0].path).unwrap().len();
        let few_bytes = search_entries(&entries, "needle", 10, bounds(one_file, 100), key);
        assert_eq!(few_bytes.found.len(), 1);
        assert_eq!(few_bytes.next_cursor.as_deref(), Some("100|a"));

        let mut expired = bounds(u64::MAX, 100);
        expired.deadline = Instant::now();
        let late = search_entries(&entries, "needle", 10, expired, key);
        assert_eq!(late.found.len(), 1, "the first thread is always searched");
        assert_eq!(late.next_cursor.as_deref(), Some("100|a"));
    }
}
