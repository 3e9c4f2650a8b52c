//! One task per loaded thread: takes the thread's core events, projects them, and queues the
//! notifications on the connection. Keeps core's order; waits (never drops) when the client is
//! slow, which in turn makes that thread's turn wait — other threads have their own tasks, so
//! they keep flowing. Applies the fan-out rule of docs/PROTOCOL.md §4: turn traffic only while the
//! connection is subscribed, lifecycle notifications always.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::core::{EventMsg, ThreadId};
use crate::protocol::notification::{
    ServerNotification, ThreadIdNotification, ThreadStatusChangedNotification,
};
use crate::protocol::thread::ThreadStatus;

use super::context::ServerContext;
use super::outgoing::AgentMessageDelta;
use super::outgoing::OutputClosed;
use super::projection::ThreadProjection;

/// Most core events projected per round: bounds the notifications one round encodes.
const EVENTS_PER_ROUND: usize = 64;
/// Encoded lines are queued once this many bytes have gathered, so one hand-off to the writer
/// never carries more than about this much.
const LINES_FLUSH_BYTES: usize = 32 * 1024;

pub(crate) fn spawn_thread_projection(
    context: &Arc<ServerContext>,
    thread_id: ThreadId,
    events_rx: mpsc::Receiver<EventMsg>,
) {
    let task = ProjectionTask {
        context: context.clone(),
        projection: ThreadProjection::new(thread_id.to_string()),
        thread_id: thread_id.clone(),
        lines: Vec::new(),
        subscribed: None,
    };
    let handle = context.lifecycle.projections.spawn(task.run(events_rx));
    context.loaded().projections.insert(thread_id, handle);
}

/// The state of one thread's projection task.
struct ProjectionTask {
    context: Arc<ServerContext>,
    thread_id: ThreadId,
    projection: ThreadProjection,
    /// Lines encoded but not yet queued on the connection.
    lines: Vec<u8>,
    /// Whether the connection is subscribed to the thread, looked up once per round (a lock
    /// on the connection's loaded threads), not once per notification.
    subscribed: Option<bool>,
}

impl ProjectionTask {
    /// Takes core's events as they come — every event already queued in one round — and queues
    /// their notifications as one message per round: a burst of deltas costs one hand-off to the
    /// writer, a lone delta still goes out at once.
    async fn run(mut self, mut events_rx: mpsc::Receiver<EventMsg>) {
        let context = self.context.clone();
        let stop = context.lifecycle.projections_stop.cancelled();
        tokio::pin!(stop);
        let mut events = Vec::with_capacity(EVENTS_PER_ROUND);
        let mut stopping = false;
        loop {
            let received = if stopping {
                events_rx.recv_many(&mut events, EVENTS_PER_ROUND).await
            } else {
                tokio::select! {
                    received = events_rx.recv_many(&mut events, EVENTS_PER_ROUND) => received,
                    _ = &mut stop => {
                        // Every turn has ended: drain what is buffered, then stop.
                        events_rx.close();
                        stopping = true;
                        continue;
                    }
                }
            };
            if received == 0 {
                return;
            }
            let now_ms = chrono::Utc::now().timestamp_millis();
            self.subscribed = None;
            for event in events.drain(..) {
                if self.handle(event, now_ms).await.is_err() {
                    return;
                }
            }
            if self.flush().await.is_err() {
                return;
            }
        }
    }

    async fn handle(&mut self, event: EventMsg, now_ms: i64) -> Result<(), OutputClosed> {
        // A question for the client goes out here, in event order, after every notification
        // core emitted before it.
        if let EventMsg::ClientRequest(request) = event {
            self.flush().await?;
            self.context
                .server_requests
                .send(self.thread_id.as_str(), request)
                .await;
            return Ok(());
        }
        let ended_turn = match &event {
            EventMsg::TurnEnded { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        };
        if let EventMsg::AgentMessageDelta {
            turn_id,
            item_id,
            delta,
        } = &event
        {
            // Most of a turn's traffic: encoded from the event's fields, without building the
            // notification (the projection has no state to update for a delta).
            if self.is_subscribed() {
                let delta = AgentMessageDelta {
                    thread_id: self.thread_id.as_str(),
                    turn_id: turn_id.as_str(),
                    item_id: item_id.as_str(),
                    delta,
                };
                self.context
                    .outgoing
                    .encode_agent_message_delta(delta, now_ms, &mut self.lines);
            }
        } else {
            for notification in self.projection.project(event) {
                // A response that reported no limits is projected as an empty snapshot; the
                // last real one stays what `account/rateLimits/read` answers.
                if let ServerNotification::RateLimitsUpdated(update) = &notification {
                    let limits = &update.rate_limits;
                    if limits.primary.is_some() || limits.secondary.is_some() {
                        self.context.record_rate_limits(limits);
                    }
                }
                let admitted = match &notification {
                    ServerNotification::ThreadStatusChanged(_) => {
                        admit_thread_notification(&self.context, &self.thread_id, &notification)
                    }
                    other => other.reaches_unsubscribed() || self.is_subscribed(),
                };
                if admitted {
                    self.context.outgoing.encode_notification(
                        &notification,
                        now_ms,
                        &mut self.lines,
                    );
                }
            }
        }
        if self.lines.len() >= LINES_FLUSH_BYTES {
            self.flush().await?;
        }
        if let Some(turn_id) = ended_turn {
            // Requests still open when their turn ended are resolved after `turn/completed`.
            self.flush().await?;
            self.context
                .server_requests
                .turn_ended(self.thread_id.as_str(), &turn_id)
                .await;
        }
        Ok(())
    }

    /// Whether the connection is subscribed to this thread, as of this round.
    fn is_subscribed(&mut self) -> bool {
        *self
            .subscribed
            .get_or_insert_with(|| self.context.is_subscribed(&self.thread_id))
    }

    /// Queues the encoded lines. Once shutdown gave up on the client, they are dropped instead:
    /// core's events keep being consumed, so turns can still end and record.
    async fn flush(&mut self) -> Result<(), OutputClosed> {
        if self.lines.is_empty() {
            return Ok(());
        }
        // The burst is queued as an exact-size copy and the encoding buffer is kept: a queued
        // burst holds no spare capacity (a stalled client's full queue costs what it carries, not
        // twice that), and encoding the next burst allocates nothing.
        let lines = bytes::Bytes::copy_from_slice(&self.lines);
        self.lines.clear();
        if self.lines.capacity() > LINES_FLUSH_BYTES * 4 {
            // One huge notification is not kept around.
            self.lines = Vec::new();
        }
        let abandoned = &self.context.lifecycle.output_abandoned;
        if abandoned.is_cancelled() {
            return Ok(());
        }
        tokio::select! {
            sent = self.context.outgoing.send_bytes(lines) => sent,
            _ = abandoned.cancelled() => Ok(()),
        }
    }
}

/// Whether a thread-scoped notification may go out under the fan-out rule, remembering the
/// status it announces.
fn admit_thread_notification(
    context: &ServerContext,
    thread_id: &ThreadId,
    notification: &ServerNotification,
) -> bool {
    if let ServerNotification::ThreadStatusChanged(changed) = notification {
        context
            .loaded()
            .statuses
            .insert(thread_id.clone(), changed.status.clone());
    }
    notification.reaches_unsubscribed() || context.is_subscribed(thread_id)
}

/// Unloads a thread: ends its turn and waits for its last notifications to go out. Returns what
/// announces the unload, for the caller to send in its place: `notLoaded` (and `thread/closed`
/// when `closed`).
pub(crate) async fn unload_thread(
    context: &ServerContext,
    thread_id: &ThreadId,
    closed: bool,
) -> Vec<ServerNotification> {
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
    announcements
}

/// After `thread/unsubscribe`: unloads the thread once it has had no subscriber and no running
/// turn for `delay`.
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
            if context.is_subscribed(&thread_id) {
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
