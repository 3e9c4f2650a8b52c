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
                if context
                    .outgoing
                    .send_notification(&notification)
                    .await
                    .is_err()
                {
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
}
