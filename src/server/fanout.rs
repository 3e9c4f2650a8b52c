//! One task per loaded thread: takes the thread's core events, projects them, and queues the
//! notifications on the connection. Keeps core's order; waits (never drops) when the client is
//! slow, which in turn makes that thread's turn wait — other threads have their own tasks, so
//! they keep flowing. Applies the fan-out rule of PROTOCOL.md §4: turn traffic only while the
//! connection is subscribed, lifecycle notifications always.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::core::EventMsg;
use crate::protocol::notification::{
    ServerNotification, ThreadIdNotification, ThreadStatusChangedNotification,
};
use crate::protocol::thread::ThreadStatus;

use super::context::ServerContext;
use super::projection::ThreadProjection;

pub fn spawn_thread_projection(
    context: &Arc<ServerContext>,
    thread_id: String,
    mut events_rx: mpsc::Receiver<EventMsg>,
) {
    let context_for_task = context.clone();
    let id = thread_id.clone();
    let handle = context.projections.spawn(async move {
        let context = context_for_task;
        let mut projection = ThreadProjection::new(thread_id.clone());
        loop {
            let event = tokio::select! {
                event = events_rx.recv() => event,
                _ = context.projections_stop.cancelled() => {
                    // Every turn has ended: drain what is buffered, then stop.
                    events_rx.close();
                    events_rx.recv().await
                }
            };
            let Some(event) = event else { return };
            // A question for the client goes out here, in event order, after every notification
            // core emitted before it.
            if let EventMsg::ClientRequest(request) = event {
                context.server_requests.send(&thread_id, request).await;
                continue;
            }
            let ended_turn = match &event {
                EventMsg::TurnEnded { turn_id, .. } => Some(turn_id.clone()),
                _ => None,
            };
            let now_ms = chrono::Utc::now().timestamp_millis();
            for notification in projection.project(event, now_ms) {
                if context.output_abandoned.is_cancelled() {
                    break;
                }
                let sent = tokio::select! {
                    sent = send_thread_notification(&context, &thread_id, &notification) => sent,
                    // Shutdown gave up on the client: keep consuming core's events unsent.
                    _ = context.output_abandoned.cancelled() => Ok(()),
                };
                if sent.is_err() {
                    return;
                }
            }
            if let Some(turn_id) = ended_turn {
                // Requests still open when their turn ended are resolved after `turn/completed`.
                context
                    .server_requests
                    .turn_ended(&thread_id, &turn_id)
                    .await;
            }
        }
    });
    context.loaded().projections.insert(id, handle);
}

/// Sends one thread-scoped notification if the fan-out rule lets it through, remembering the
/// status it announces.
pub async fn send_thread_notification(
    context: &ServerContext,
    thread_id: &str,
    notification: &ServerNotification,
) -> Result<(), super::outgoing::OutputClosed> {
    if let ServerNotification::ThreadStatusChanged(changed) = notification {
        context
            .loaded()
            .statuses
            .insert(thread_id.to_string(), changed.status.clone());
    }
    if !notification.reaches_unsubscribed() && !context.is_subscribed(thread_id) {
        return Ok(());
    }
    context.outgoing.send_notification(notification).await
}

/// Unloads a thread: ends its turn, waits for its last notifications to go out, then announces
/// `notLoaded` (and `thread/closed` when `closed`).
pub async fn unload_thread(context: &ServerContext, thread_id: &str, closed: bool) {
    let projection = {
        let mut loaded = context.loaded();
        loaded.subscribed.remove(thread_id);
        loaded.projections.remove(thread_id)
    };
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
    context.loaded().statuses.remove(thread_id);
    let _ = context
        .outgoing
        .send_notification(&ServerNotification::ThreadStatusChanged(
            ThreadStatusChangedNotification {
                thread_id: thread_id.to_string(),
                status: ThreadStatus::NotLoaded,
            },
        ))
        .await;
    if closed {
        let _ = context
            .outgoing
            .send_notification(&ServerNotification::ThreadClosed(ThreadIdNotification {
                thread_id: thread_id.to_string(),
            }))
            .await;
    }
}

/// After `thread/unsubscribe`: unloads the thread once it has had no subscriber and no running
/// turn for `delay`.
pub fn schedule_idle_unload(context: &Arc<ServerContext>, thread_id: String, delay: Duration) {
    let context_for_task = context.clone();
    context.projections.spawn(async move {
        let context = context_for_task;
        // Bounded by the thread's life: each round either unloads, or stops because the thread
        // was resubscribed or unloaded, or waits out a running turn.
        loop {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = context.projections_stop.cancelled() => return,
            }
            if context.is_subscribed(&thread_id) {
                return;
            }
            match context.threads.get(&thread_id) {
                Ok(thread) if thread.active_turn_id().is_some() => continue,
                Ok(_) => return unload_thread(&context, &thread_id, true).await,
                Err(_) => return,
            }
        }
    });
}
