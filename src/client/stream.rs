//! `ResponseStream`: the events of one response, produced by a task that this value owns.
//!
//! The task reads the HTTP body, decodes it with [`crate::wire::sse::SseEventStream`] and sends
//! each event through a bounded channel. Dropping the `ResponseStream` cancels the task, which
//! stops polling and drops the body, closing the connection to the provider.

use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::wire::sse::SseEventStream;
use crate::wire::{ResponseEvent, StreamError};

/// Events buffered between the decoder task and the turn loop. Small: the turn loop is fast,
/// and a full channel makes the decoder stop reading, which is the backpressure we want.
const EVENT_CHANNEL_CAPACITY: usize = 64;

pub struct ResponseStream {
    events_rx: mpsc::Receiver<Result<ResponseEvent, StreamError>>,
    _cancel_on_drop: DropGuard,
}

impl ResponseStream {
    pub(super) fn spawn(
        response: reqwest::Response,
        idle_timeout: Duration,
        header_events: Vec<ResponseEvent>,
    ) -> ResponseStream {
        let (events_tx, events_rx) = mpsc::channel(EVENT_CHANNEL_CAPACITY);
        let cancel = CancellationToken::new();
        let task_cancel = cancel.clone();
        // Owned by `cancel`: the task ends when the stream is dropped, when the consumer stops
        // receiving, or when the response ends.
        tokio::spawn(async move {
            for event in header_events {
                if events_tx.send(Ok(event)).await.is_err() {
                    return;
                }
            }
            let body = response.bytes_stream().boxed();
            let mut events = SseEventStream::new(body, idle_timeout);
            loop {
                let next = tokio::select! {
                    biased;
                    _ = task_cancel.cancelled() => return,
                    next = events.next_event() => next,
                };
                let Some(next) = next else { return };
                tokio::select! {
                    biased;
                    _ = task_cancel.cancelled() => return,
                    sent = events_tx.send(next) => if sent.is_err() { return },
                }
            }
        });
        ResponseStream {
            events_rx,
            _cancel_on_drop: cancel.drop_guard(),
        }
    }

    /// A stream built from already-decoded events; used by other transports and tests.
    pub fn from_channel(
        events_rx: mpsc::Receiver<Result<ResponseEvent, StreamError>>,
        cancel: CancellationToken,
    ) -> ResponseStream {
        ResponseStream {
            events_rx,
            _cancel_on_drop: cancel.drop_guard(),
        }
    }

    /// The next event; `None` once the stream has ended (after `Completed` or an error).
    pub async fn next(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        self.events_rx.recv().await
    }
}
