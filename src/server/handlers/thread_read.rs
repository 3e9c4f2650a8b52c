//! Reading threads without loading them: `thread/read`, `thread/list` (paged from the shared
//! index, never by opening every rollout) and `thread/loaded/list`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::PathBuf;

use crate::core::{ThreadId, TurnId};
use crate::protocol::thread::{
    CwdFilter, SortDirection, ThreadListParams, ThreadListResponse, ThreadLoadedListParams,
    ThreadLoadedListResponse, ThreadReadParams, ThreadReadResponse, ThreadSortKey,
    MAX_INCLUDED_THREAD_IDS,
};
use crate::rollout::paths::{archived_dir, find_rollout, sessions_dir};
use crate::rollout::{read_rollout, IndexEntry, RolloutContents};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::history::turns_page;
use super::thread_object::{source_kind, thread_from_entry, thread_object};

/// `thread/list` page size when the client names none, and the most it may ask for.
const DEFAULT_LIST_LIMIT: usize = 25;
const MAX_LIST_LIMIT: usize = 200;

/// Reads a rollout off the async runtime; skipped lines are logged as warnings.
pub(crate) async fn load_contents(path: Option<PathBuf>) -> Result<RolloutContents, HandlerError> {
    let path = path.ok_or_else(|| HandlerError::InvalidRequest("thread has no rollout".into()))?;
    let contents = tokio::task::spawn_blocking(move || read_rollout(&path))
        .await
        .map_err(|e| HandlerError::Internal(e.to_string()))??;
    for warning in &contents.warnings {
        tracing::warn!("{warning}");
    }
    Ok(contents)
}

/// Runs CPU- or disk-heavy work (rebuilding thousands of turns) off the async runtime, so the
/// tasks that stream other threads' notifications keep their workers.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, HandlerError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| HandlerError::Internal(e.to_string()))
}

/// The index entry of `thread_id`, falling back to a walk when the index does not know it yet.
pub(super) async fn find_entry(
    context: &ServerContext,
    thread_id: &str,
) -> Result<Option<IndexEntry>, HandlerError> {
    let index = context.threads.index().clone();
    let home = context.config.home.clone();
    let id = thread_id.to_string();
    let found = tokio::task::spawn_blocking(move || {
        if let Some(entry) = index.get(&id)?.filter(|e| e.path.exists()) {
            return Ok::<_, crate::rollout::RolloutError>(Some(entry));
        }
        for (root, archived) in [(sessions_dir(&home), false), (archived_dir(&home), true)] {
            if let Some(path) = find_rollout(&root, &id) {
                let contents = read_rollout(&path)?;
                return Ok(Some(IndexEntry::from_contents(&contents, archived)));
            }
        }
        Ok(None)
    })
    .await
    .map_err(|e| HandlerError::Internal(e.to_string()))??;
    Ok(found)
}

pub(crate) async fn thread_read(
    context: &ServerContext,
    params: ThreadReadParams,
) -> Result<ThreadReadResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let loaded = context.threads.get(&thread_id).ok();
    if params.include_turns && loaded.as_ref().is_some_and(|t| t.ephemeral) {
        return Err(HandlerError::InvalidRequest(
            "ephemeral threads do not support includeTurns".to_string(),
        ));
    }
    let entry = match &loaded {
        Some(thread) if thread.ephemeral => None,
        _ => find_entry(context, thread_id.as_str()).await?,
    };
    let status = context.status_of(&thread_id);
    let mut thread = match (&loaded, &entry) {
        (Some(live), entry) => thread_object(live, status, entry.as_ref()),
        (None, Some(entry)) => thread_from_entry(entry, status),
        (None, None) => {
            return Err(HandlerError::InvalidRequest(format!(
                "thread not loaded: {thread_id}"
            )))
        }
    };
    let mut turns_backwards_cursor = None;
    if params.include_turns {
        let path = entry.as_ref().map(|e| e.path.clone());
        let active = loaded.as_ref().and_then(|t| t.active_turn_id());
        let contents = load_contents(path).await?;
        let page = blocking(move || {
            turns_page(
                &contents.items,
                &contents.item_times_ms,
                active.as_ref().map(TurnId::as_str),
                params.turns_limit,
                params.turns_cursor.as_deref(),
            )
        })
        .await??;
        thread.turns = page.turns;
        turns_backwards_cursor = page.backwards_cursor;
    }
    Ok(ThreadReadResponse {
        thread,
        turns_backwards_cursor,
    })
}

pub(crate) async fn thread_list(
    context: &ServerContext,
    params: ThreadListParams,
) -> Result<ThreadListResponse, HandlerError> {
    let cursor = params.cursor.as_deref().map(parse_cursor).transpose()?;
    if let Some(ids) = params
        .included_thread_ids
        .as_ref()
        .filter(|ids| ids.len() > MAX_INCLUDED_THREAD_IDS)
    {
        // The reference's words, exactly: clients match error texts.
        tracing::debug!(count = ids.len(), "includedThreadIds over the limit");
        return Err(HandlerError::InvalidParams(format!(
            "includedThreadIds accepts at most {MAX_INCLUDED_THREAD_IDS} entries"
        )));
    }
    let key = params.sort_key.unwrap_or(ThreadSortKey::CreatedAt);
    let ascending = params.sort_direction == Some(SortDirection::Asc);
    let limit = params
        .limit
        .map(|l| (l as usize).clamp(1, MAX_LIST_LIMIT))
        .unwrap_or(DEFAULT_LIST_LIMIT);
    let index = context.threads.index().clone();
    let page = tokio::task::spawn_blocking(move || {
        // Threads whose index line was lost are listed again; a failure here only means the
        // listing may miss them, so it does not fail the request.
        if let Err(error) = index.reconcile() {
            tracing::warn!(%error, "could not reconcile the thread index with the rollouts");
        }
        index.query(|entries| select_page(entries, &params, key, ascending, cursor, limit))
    })
    .await
    .map_err(|e| HandlerError::Internal(e.to_string()))??;
    let data = page
        .entries
        .iter()
        .map(|entry| {
            // The index holds the ids its rollouts recorded; one that is no thread id names no
            // loaded thread.
            let status = ThreadId::parse(&entry.id)
                .map_or(crate::protocol::thread::ThreadStatus::NotLoaded, |id| {
                    context.status_of(&id)
                });
            thread_from_entry(entry, status)
        })
        .collect();
    Ok(ThreadListResponse {
        data,
        next_cursor: page.next_cursor,
        backwards_cursor: page.backwards_cursor,
    })
}

struct ListPage {
    entries: Vec<IndexEntry>,
    next_cursor: Option<String>,
    backwards_cursor: Option<String>,
}

/// Filters, sorts and cuts one page out of the index. Pure apart from a `stat` per listed entry
/// (entries whose file vanished are left out).
fn select_page(
    entries: &HashMap<String, IndexEntry>,
    params: &ThreadListParams,
    key: ThreadSortKey,
    ascending: bool,
    cursor: Option<(i64, String)>,
    limit: usize,
) -> ListPage {
    // Creation sorts by second and then id (UUIDv7 ids grow with time); updates by millisecond.
    let sort_value = |entry: &IndexEntry| match key {
        ThreadSortKey::CreatedAt => entry.created_at,
        _ => entry.updated_at_ms,
    };
    let order = |a: (i64, &str), b: (i64, &str)| {
        let ordering = a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1));
        if ascending {
            ordering
        } else {
            ordering.reverse()
        }
    };
    let mut matching: Vec<&IndexEntry> = entries
        .values()
        .filter(|entry| matches_filters(entry, params))
        .filter(|entry| match &cursor {
            Some((value, id)) => {
                order((sort_value(entry), &entry.id), (*value, id)) == Ordering::Greater
            }
            None => true,
        })
        .collect();
    let compare =
        |a: &&IndexEntry, b: &&IndexEntry| order((sort_value(a), &a.id), (sort_value(b), &b.id));
    // Only the first page's worth needs ordering: select it in linear time, then sort just that
    // (with slack for entries whose file vanished; if that is not enough, sort everything).
    let wanted = limit + 1 + 16;
    if matching.len() > wanted {
        matching.select_nth_unstable_by(wanted, compare);
        let vanished = matching[..wanted]
            .iter()
            .filter(|e| !e.path.exists())
            .count();
        if vanished <= 16 {
            matching.truncate(wanted);
        }
    }
    matching.sort_by(compare);
    let mut page = Vec::with_capacity(limit);
    let mut rest = matching.into_iter();
    for entry in rest.by_ref() {
        if entry.path.exists() {
            page.push(entry.clone());
        }
        if page.len() == limit {
            break;
        }
    }
    let cursor_of = |entry: &IndexEntry| format!("{}|{}", sort_value(entry), entry.id);
    let next_cursor = match rest.next() {
        Some(_) => page.last().map(cursor_of),
        None => None,
    };
    ListPage {
        backwards_cursor: page.first().map(cursor_of),
        next_cursor,
        entries: page,
    }
}

pub(super) fn matches_filters(entry: &IndexEntry, params: &ThreadListParams) -> bool {
    if entry.archived != params.archived.unwrap_or(false) {
        return false;
    }
    let cwd_ok = match &params.cwd {
        None => true,
        Some(CwdFilter::One(cwd)) => &entry.cwd == cwd,
        Some(CwdFilter::Many(cwds)) => cwds.is_empty() || cwds.contains(&entry.cwd),
    };
    let provider_ok = match &params.model_providers {
        Some(providers) if !providers.is_empty() => providers.contains(&entry.model_provider),
        _ => true,
    };
    let kind = source_kind(entry);
    let source_ok = match &params.source_kinds {
        Some(kinds) if !kinds.is_empty() => kinds
            .iter()
            .any(|k| k == kind || (kind == "vscode" && k == "appServer")),
        _ => matches!(kind, "cli" | "vscode" | "appServer"),
    };
    let search_ok = match &params.search_term {
        Some(term) if !term.is_empty() => entry
            .name
            .as_deref()
            .unwrap_or(&entry.preview)
            .contains(term.as_str()),
        _ => true,
    };
    let included = params
        .included_thread_ids
        .as_ref()
        .is_none_or(|ids| ids.contains(&entry.id));
    let excluded = params
        .excluded_thread_ids
        .as_ref()
        .is_some_and(|ids| ids.contains(&entry.id));
    let originator_ok = match &params.originators {
        Some(names) if !names.is_empty() => {
            entry.originator.as_ref().is_some_and(|o| names.contains(o))
        }
        _ => true,
    };
    cwd_ok && provider_ok && source_ok && search_ok && included && !excluded && originator_ok
}

/// Cursors are `<sort value>|<thread id>`; anything else is refused with the reference's text.
pub(super) fn parse_cursor(cursor: &str) -> Result<(i64, String), HandlerError> {
    let invalid = || HandlerError::InvalidRequest(format!("invalid cursor: {cursor}"));
    let (value, id) = cursor.split_once('|').ok_or_else(invalid)?;
    let value = value.parse::<i64>().map_err(|_| invalid())?;
    if id.is_empty() {
        return Err(invalid());
    }
    Ok((value, id.to_string()))
}

pub(crate) fn thread_loaded_list(
    context: &ServerContext,
    params: ThreadLoadedListParams,
) -> Result<ThreadLoadedListResponse, HandlerError> {
    let ids = context.threads.loaded_thread_ids();
    let start = match params.cursor.as_deref() {
        Some(cursor) => ids
            .iter()
            .position(|id| id.as_str() > cursor)
            .unwrap_or(ids.len()),
        None => 0,
    };
    let limit = params
        .limit
        .map(|l| (l as usize).max(1))
        .unwrap_or(usize::MAX);
    let data: Vec<String> = ids
        .iter()
        .skip(start)
        .take(limit)
        .map(ThreadId::to_string)
        .collect();
    let next_cursor = if start + data.len() < ids.len() {
        data.last().cloned()
    } else {
        None
    };
    Ok(ThreadLoadedListResponse { data, next_cursor })
}

handler!(ThreadList, |context, params| thread_list(context, params)
    .await);
handler!(ThreadRead, |context, params| thread_read(context, params)
    .await);
handler!(ThreadLoadedList, |context, params| thread_loaded_list(
    context, params
));
