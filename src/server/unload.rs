//! When a thread leaves memory: unloaded for every connection (`thread/unsubscribe`'s idle
//! delay running out, `thread/delete`, an archive), and what a connection that ends leaves
//! behind. The thread's projection task (see [`super::fanout`]) drains its last notifications
//! before the thread is announced `notLoaded`.

use std::sync::Arc;
use std::time::Duration;

use crate::core::ThreadId;
use crate::protocol::notification::{
    ServerNotification, ThreadIdNotification, ThreadStatusChangedNotification,
};
use crate::protocol::thread::ThreadStatus;

use super::context::ServerContext;

/// Unloads a thread for every connection: ends its turn and waits for its last notifications to
/// go out. The other connections are told at once; what announces the unload — `notLoaded`
/// (and `thread/closed` when `closed`) — is returned for the caller to send in its own place.
pub(crate) async fn unload_thread(
    context: &ServerContext,
    thread_id: &ThreadId,
    closed: bool,
) -> Vec<ServerNotification> {
    for connection in context.hub.initialized() {
        connection.unsubscribe(thread_id);
    }
    context.unsubscribe(thread_id);
    let projection = context.hub.loaded().projections.remove(thread_id);
    drop(context.threads.unload_thread(thread_id).await);
    if let Some(handle) = projection {
        // The task ends once the thread (and so its event sender) is gone.
        if tokio::time::timeout(Duration::from_secs(1), handle)
            .await
            .is_err()
        {
            tracing::warn!(%thread_id, "projection did not drain in time");
        }
    }
    context.hub.loaded().statuses.remove(thread_id);
    let mut announcements = vec![ServerNotification::ThreadStatusChanged(
        ThreadStatusChangedNotification {
            thread_id: thread_id.to_string(),
            status: ThreadStatus::NotLoaded,
        },
    )];
    if closed {
        announcements.push(ServerNotification::ThreadClosed(ThreadIdNotification {
            thread_id: thread_id.to_string(),
        }));
    }
    for other in context.hub.initialized() {
        if other.id() != context.id {
            for announcement in &announcements {
                let _ = other.outgoing().send_notification(announcement).await;
            }
        }
    }
    announcements
}

/// Forgets a connection that ended: the hub forgets it (its pending questions are withdrawn,
/// answered `Cancelled` when nobody else was asked), what only it could reach is stopped (its
/// `command/exec` and `process/spawn` processes killed, its watches and searches stopped), and
/// the threads only it was subscribed to are left to the idle unload, as after
/// `thread/unsubscribe`.
pub(crate) fn disconnect(context: &Arc<ServerContext>) {
    context.hub.forget(context.id);
    context.stop_owned_work();
    let subscribed: Vec<ThreadId> = context.loaded().subscribed.drain().collect();
    context.hub.membership_changed();
    let delay = Duration::from_secs(context.config.thread_unload_delay_secs);
    for thread_id in subscribed {
        if context.hub.audience(&thread_id).subscribers.is_empty() {
            schedule_idle_unload(context, thread_id, delay);
        }
    }
}

/// After `thread/unsubscribe` (or its last subscriber's connection closing): unloads the thread
/// once it has had no subscriber and no running turn for `delay`.
pub(crate) fn schedule_idle_unload(
    context: &Arc<ServerContext>,
    thread_id: ThreadId,
    delay: Duration,
) {
    let context_for_task = context.clone();
    context.lifecycle.projections.spawn(async move {
        let context = context_for_task;
        // Bounded by the thread's life: each round either unloads, or stops because the thread
        // was resubscribed or unloaded, or waits out a running turn.
        loop {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = context.lifecycle.projections_stop.cancelled() => return,
            }
            if !context.hub.audience(&thread_id).subscribers.is_empty() {
                return;
            }
            // Decided before unloading: a thread handle held across `unload_thread` would keep
            // the thread's event sender alive, and the projection task, which ends when that
            // sender is gone, could only be given up on after its drain timeout.
            let turn_running = match context.threads.get(&thread_id) {
                Ok(thread) => thread.active_turn_id().is_some(),
                Err(_) => return,
            };
            if turn_running {
                continue;
            }
            for announcement in unload_thread(&context, &thread_id, true).await {
                let _ = context.outgoing.send_notification(&announcement).await;
            }
            return;
        }
    });
}
