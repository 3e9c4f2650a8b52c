//! `thread/delete`: removes a thread for good (its rollout, live or archived, and its index
//! entry). A thread with a running turn is refused rather than interrupted, so a client cannot
//! lose a turn's work by a stray delete.

use crate::core::{CoreError, ThreadId};
use crate::protocol::notification::{ServerNotification, ThreadIdNotification};
use crate::protocol::thread::ThreadIdParams;
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::unload::unload_thread;
use super::reply::{After, Reply};

/// Unloads the thread (announcing `notLoaded` before the response, as the reference does),
/// deletes its rollout, answers `{}`, then sends `thread/deleted`.
pub(crate) async fn thread_delete(
    context: &ServerContext,
    params: ThreadIdParams,
) -> Reply<EmptyResponse> {
    let mut before = Vec::new();
    match delete(context, &params, &mut before).await {
        Ok(response) => {
            let deleted = ServerNotification::ThreadDeleted(ThreadIdNotification {
                thread_id: params.thread_id,
            });
            Reply {
                before,
                result: Ok(response),
                after: vec![After::Notify(deleted)],
            }
        }
        Err(error) => Reply {
            before,
            result: Err(error),
            after: Vec::new(),
        },
    }
}

async fn delete(
    context: &ServerContext,
    params: &ThreadIdParams,
    before: &mut Vec<ServerNotification>,
) -> Result<EmptyResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let mut was_loaded = false;
    if let Ok(thread) = context.threads.get(&thread_id) {
        if let Some(turn_id) = thread.active_turn_id() {
            return Err(HandlerError::InvalidRequest(format!(
                "thread {thread_id} has a running turn ({turn_id}); interrupt it before deleting the thread"
            )));
        }
        if thread.ephemeral {
            return Err(CoreError::NoRollout(thread_id.to_string()).into());
        }
        drop(thread);
        before.extend(unload_thread(context, &thread_id, false).await);
        was_loaded = true;
    }
    match context.threads.delete_thread(&thread_id).await {
        Ok(()) => Ok(EmptyResponse {}),
        // A loaded thread that never sent a message has no file yet: unloading it was all
        // there was to delete.
        Err(CoreError::NoRollout(_)) if was_loaded => Ok(EmptyResponse {}),
        Err(error) => Err(error.into()),
    }
}

handler!(ThreadDelete, |context, params| thread_delete(
    context, params
)
.await);
