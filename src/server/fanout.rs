//! One task per loaded thread: takes the thread's core events, projects them, and queues the
//! notifications on the connection. Keeps core's order; waits (never drops) when the client is slow.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::core::EventMsg;

use super::context::ServerContext;
use super::projection::ThreadProjection;

pub fn spawn_thread_projection(
    context: &Arc<ServerContext>,
    thread_id: String,
    mut events_rx: mpsc::Receiver<EventMsg>,
) {
    let context_for_task = context.clone();
    context.projections.spawn(async move {
        let context = context_for_task;
        let mut projection = ThreadProjection::new(thread_id);
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
            let now_ms = chrono::Utc::now().timestamp_millis();
            for notification in projection.project(event, now_ms) {
                if context
                    .outgoing
                    .send_notification(&notification)
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    });
}
