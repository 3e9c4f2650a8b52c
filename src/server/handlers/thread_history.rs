//! `thread/revert` and `thread/inject_items`: edits of a loaded thread's model-visible history
//! between turns. Core persists each edit before applying it (`core/history_edit.rs`); these
//! handlers check the params and shape the answers.

use crate::core::ThreadId;
use crate::protocol::notification::{ServerNotification, ThreadIdNotification};
use crate::protocol::thread_history::{
    ThreadInjectItemsParams, ThreadRevertParams, ThreadRevertResponse,
};
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::injected_items::checked_items;
use super::reply::{After, Reply};
use super::thread_object::thread_object;
use super::thread_read::find_entry;

/// Answers the thread (its `turns` empty, as the reference's) and then sends `thread/reverted`.
pub(crate) async fn thread_revert(
    context: &ServerContext,
    params: ThreadRevertParams,
) -> Reply<ThreadRevertResponse> {
    match revert(context, &params).await {
        Ok(response) => Reply::then(
            response,
            vec![After::Notify(ServerNotification::ThreadReverted(
                ThreadIdNotification {
                    thread_id: params.thread_id,
                },
            ))],
        ),
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn revert(
    context: &ServerContext,
    params: &ThreadRevertParams,
) -> Result<ThreadRevertResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let thread = loaded(context, &thread_id)?;
    let newest_kept = thread.revert_to_before(&params.before_turn_id).await?;
    let entry = find_entry(context, thread_id.as_str()).await?;
    let status = context.status_of(&thread_id);
    Ok(ThreadRevertResponse {
        thread: thread_object(&thread, status, entry.as_ref()),
        // `thread/turns/list`'s own cursor form for "starting at this turn".
        turns_backwards_cursor: newest_kept.map(|turn_id| format!("at:{turn_id}")),
        items_backwards_cursor: None,
    })
}

pub(crate) async fn thread_inject_items(
    context: &ServerContext,
    params: ThreadInjectItemsParams,
) -> Result<EmptyResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let items = checked_items(&params.items).map_err(HandlerError::InvalidParams)?;
    let thread = loaded(context, &thread_id)?;
    thread.inject_items(items).await?;
    Ok(EmptyResponse {})
}

/// Both edits change live history, so the thread must be loaded (as the reference requires).
fn loaded(
    context: &ServerContext,
    thread_id: &ThreadId,
) -> Result<std::sync::Arc<crate::core::thread::Thread>, HandlerError> {
    // The reference's text for a thread that is not loaded: `thread not found: <id>`.
    Ok(context.threads.get(thread_id)?)
}

handler!(ThreadRevert, |context, params| thread_revert(
    context, params
)
.await);
handler!(ThreadInjectItems, |context, params| thread_inject_items(
    context, params
)
.await);
