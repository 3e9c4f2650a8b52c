//! Thread housekeeping: `thread/archive`, `thread/unarchive`, `thread/name/set`,
//! `thread/unsubscribe`.

use std::sync::Arc;
use std::time::Duration;

use crate::core::{CoreError, ThreadId};
use crate::protocol::notification::{
    ServerNotification, ThreadIdNotification, ThreadNameUpdatedNotification,
};
use crate::protocol::thread::{
    ThreadIdParams, ThreadResponse, ThreadSetNameParams, ThreadStatus, ThreadUnsubscribeResponse,
    ThreadUnsubscribeStatus,
};
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::unload::{schedule_idle_unload, unload_thread};
use super::reply::{After, Reply};
use super::thread_object::thread_from_entry;

/// `thread/archive`: unloads the thread (announcing `notLoaded` before the response), moves its
/// rollout, answers `{}`, then sends `thread/archived`.
pub(crate) async fn thread_archive(
    context: &ServerContext,
    params: ThreadIdParams,
) -> Reply<EmptyResponse> {
    let mut before = Vec::new();
    let result = archive(context, &params, &mut before).await;
    let archived = ServerNotification::ThreadArchived(ThreadIdNotification {
        thread_id: params.thread_id,
    });
    Reply {
        before,
        result,
        after: vec![After::Notify(archived)],
    }
}

async fn archive(
    context: &ServerContext,
    params: &ThreadIdParams,
    before: &mut Vec<ServerNotification>,
) -> Result<EmptyResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    if let Ok(thread) = context.threads.get(&thread_id) {
        if thread.ephemeral {
            return Err(CoreError::NoRollout(thread_id.to_string()).into());
        }
        drop(thread);
        before.extend(unload_thread(context, &thread_id, false).await);
    }
    context.threads.archive_thread(&thread_id).await?;
    Ok(EmptyResponse {})
}

/// `thread/unarchive`: moves the rollout back (not loading it), answers `{thread}`, then sends
/// `thread/unarchived`.
pub(crate) async fn thread_unarchive(
    context: &ServerContext,
    params: ThreadIdParams,
) -> Reply<ThreadResponse> {
    let result = unarchive(context, &params).await;
    let unarchived = ServerNotification::ThreadUnarchived(ThreadIdNotification {
        thread_id: params.thread_id,
    });
    Reply {
        before: Vec::new(),
        result,
        after: vec![After::Notify(unarchived)],
    }
}

async fn unarchive(
    context: &ServerContext,
    params: &ThreadIdParams,
) -> Result<ThreadResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let entry = context.threads.unarchive_thread(&thread_id).await?;
    Ok(ThreadResponse {
        thread: thread_from_entry(&entry, ThreadStatus::NotLoaded),
    })
}

/// `thread/name/set`: persists the name (loaded or not), answers `{}`, then sends
/// `thread/name/updated` (to every connection, subscribed or not).
pub(crate) async fn thread_set_name(
    context: &ServerContext,
    params: ThreadSetNameParams,
) -> Reply<EmptyResponse> {
    let name = params.name.trim().to_string();
    match set_name(context, &params.thread_id, &name).await {
        Ok(thread_id) => {
            let updated = ServerNotification::ThreadNameUpdated(ThreadNameUpdatedNotification {
                thread_id,
                thread_name: Some(name),
            });
            Reply::then(EmptyResponse {}, vec![After::Notify(updated)])
        }
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn set_name(
    context: &ServerContext,
    raw_id: &str,
    name: &str,
) -> Result<String, HandlerError> {
    let thread_id = ThreadId::parse(raw_id)?;
    if name.is_empty() {
        return Err(HandlerError::InvalidRequest(
            "thread name must not be empty".to_string(),
        ));
    }
    if let Ok(thread) = context.threads.get(&thread_id) {
        thread.set_name(name.to_string()).await?;
        return Ok(thread_id.into_string());
    }
    context
        .threads
        .name_persisted_thread(&thread_id, name.to_string())
        .await?;
    Ok(thread_id.into_string())
}

/// `thread/unsubscribe`: stops turn traffic for this connection; the thread stays loaded until
/// it has been idle without subscribers for `thread_unload_delay_secs`.
pub(crate) fn thread_unsubscribe(
    context: &Arc<ServerContext>,
    params: ThreadIdParams,
) -> Result<ThreadUnsubscribeResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    if context.threads.get(&thread_id).is_err() {
        return Ok(ThreadUnsubscribeResponse {
            status: ThreadUnsubscribeStatus::NotLoaded,
        });
    }
    let was_subscribed = context.unsubscribe(&thread_id);
    if !was_subscribed {
        return Ok(ThreadUnsubscribeResponse {
            status: ThreadUnsubscribeStatus::NotSubscribed,
        });
    }
    let delay = Duration::from_secs(context.config.thread_unload_delay_secs);
    schedule_idle_unload(context, thread_id, delay);
    Ok(ThreadUnsubscribeResponse {
        status: ThreadUnsubscribeStatus::Unsubscribed,
    })
}

handler!(ThreadArchive, |context, params| thread_archive(
    context, params
)
.await);
handler!(ThreadUnarchive, |context, params| thread_unarchive(
    context, params
)
.await);
handler!(ThreadSetName, |context, params| thread_set_name(
    context, params
)
.await);
handler!(ThreadUnsubscribe, |context, params| thread_unsubscribe(
    context, params
));
