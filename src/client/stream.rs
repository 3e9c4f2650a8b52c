//! `ResponseStream`: the events of one response, produced by two tasks that this value owns.
//!
//! ```text
//! transport (HTTP body or WebSocket) ─▶ decoder task ─[decoded_tx, bounded]─▶ mapper task
//!                                        (wire decoder,                        (completed items,
//!                                         policies, idle                        provider errors,
//!                                         timeout)                              diagnostics)
//!                                                       ─[events_tx, bounded]─▶ ResponseStream::next
//! ```
//!
//! Each channel has one sender, owned by one task. Ownership ends the chain: dropping the
//! `ResponseStream` cancels the token both tasks watch; the mapper stops polling and returns, the
//! decoder stops reading and drops the transport, which closes the connection to the provider.
//! No event is injected on cancellation: the consumer is gone, so there is nobody to tell.
//!
//! Events travel in batches: the decoder sends, with each event it waited for, every further
//! event the bytes already read decide (up to [`MAX_BATCH`]). A provider that writes faster than
//! the turn consumes costs one hand-off per burst, not per event; a paced one still gets each
//! event forwarded the moment it is decoded.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFuture};

use crate::wire::{ResponseEvent, ResponseEventSource, ResponseItem, StreamError};

/// Batches of decoded events buffered between the decoder and the mapper. The mapper only clones items and
/// forwards, so a modest buffer absorbs bursts; when full, the decoder stops reading the socket,
/// which is the backpressure we want (memory stays bounded however fast the provider writes).
const DECODED_CHANNEL_CAPACITY: usize = 16;
/// Batches buffered between the mapper and the turn loop, bounded for the same reason.
const EVENT_CHANNEL_CAPACITY: usize = 16;
/// Most events in one batch, so the channels bound memory in events, not only in batches
/// (at most `MAX_BATCH` × capacity events wait in each).
const MAX_BATCH: usize = 64;

/// The outcome of a successful response, for callers that want the items without having
/// collected them from the events (e.g. diagnostics, compaction).
#[derive(Debug, Clone, PartialEq)]
pub struct LastResponse {
    pub response_id: String,
    /// Every `output_item.done` item, in arrival order.
    pub items: Vec<ResponseItem>,
}

/// Who the stream talks to, for logs and error context.
#[derive(Debug, Clone, Default)]
pub struct StreamDiagnostics {
    /// The provider's display name.
    pub provider: String,
    /// `x-request-id` of the response, when the provider sent one.
    pub request_id: Option<String>,
}

pub struct ResponseStream {
    events_rx: mpsc::Receiver<Batch>,
    /// The rest of the batch being handed out, front first.
    pending: std::vec::IntoIter<Result<ResponseEvent, StreamError>>,
    last_response_rx: oneshot::Receiver<LastResponse>,
    diagnostics: StreamDiagnostics,
    _cancel_on_drop: DropGuard,
}

impl ResponseStream {
    /// Starts the decoder and mapper tasks over `source`. `header_events` are delivered before
    /// the first decoded event.
    pub(super) fn spawn<S>(
        source: S,
        header_events: Vec<ResponseEvent>,
        diagnostics: StreamDiagnostics,
    ) -> ResponseStream
    where
        S: ResponseEventSource + Send + 'static,
    {
        let cancel = CancellationToken::new();
        let (decoded_tx, decoded_rx) = mpsc::channel(DECODED_CHANNEL_CAPACITY);
        let (events_tx, events_rx) = mpsc::channel(EVENT_CHANNEL_CAPACITY);
        let (last_response_tx, last_response_rx) = oneshot::channel();
        // Both tasks are owned by `cancel`, whose guard lives in the returned stream: each ends
        // when the stream is dropped, or earlier when its input ends or its receiver is gone.
        tokio::spawn(run_decoder(
            source,
            header_events,
            decoded_tx,
            cancel.child_token(),
        ));
        let mapper = Mapper {
            decoded_rx,
            events_tx,
            last_response_tx: Some(last_response_tx),
            items: Vec::new(),
            diagnostics: diagnostics.clone(),
        };
        tokio::spawn(mapper.run(cancel.child_token()));
        ResponseStream {
            events_rx,
            pending: Vec::new().into_iter(),
            last_response_rx,
            diagnostics,
            _cancel_on_drop: cancel.drop_guard(),
        }
    }

    /// The next event; `None` once the stream has ended (after `Completed` or an error).
    pub async fn next(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        // Bounded: each round takes one batch off the channel; batches are never empty.
        loop {
            if let Some(event) = self.pending.next() {
                return Some(event);
            }
            self.pending = self.events_rx.recv().await?.into_iter();
        }
    }

    /// The provider's request id (`x-request-id`), for error reports and traces.
    pub fn request_id(&self) -> Option<&str> {
        self.diagnostics.request_id.as_deref()
    }

    /// The completed items of the response, once `Completed` has been received; `None` before
    /// that, after a failure, or when already taken.
    pub fn take_last_response(&mut self) -> Option<LastResponse> {
        self.last_response_rx.try_recv().ok()
    }
}

/// Events decoded from one burst of input, in order. Batching keeps the cost of a channel hand-off
/// (and of waking the task on the other side) per burst instead of per event.
type Batch = Vec<Result<ResponseEvent, StreamError>>;

/// Sends `value` unless `cancelled` fires first; `false` when the stream is over for this sender.
async fn send_or_cancelled<T>(
    tx: &mpsc::Sender<T>,
    value: T,
    cancelled: Pin<&mut WaitForCancellationFuture<'_>>,
) -> bool {
    tokio::select! {
        biased;
        () = cancelled => false,
        sent = tx.send(value) => sent.is_ok(),
    }
}

/// Awaits `future` unless `cancelled` fires first.
async fn unless_cancelled<F: Future>(
    future: F,
    cancelled: Pin<&mut WaitForCancellationFuture<'_>>,
) -> Option<F::Output> {
    tokio::select! {
        biased;
        () = cancelled => None,
        output = future => Some(output),
    }
}

/// Owns the transport: reads and decodes until the stream ends, the mapper goes away, or the
/// consumer drops the stream. Returning drops `source`, and with it the connection.
async fn run_decoder<S>(
    mut source: S,
    header_events: Vec<ResponseEvent>,
    decoded_tx: mpsc::Sender<Batch>,
    cancel: CancellationToken,
) where
    S: ResponseEventSource,
{
    // One registration with the token for the task's life, not one per event.
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    if !header_events.is_empty() {
        let batch = header_events.into_iter().map(Ok).collect();
        if !send_or_cancelled(&decoded_tx, batch, cancelled.as_mut()).await {
            return;
        }
    }
    loop {
        let Some(next) = unless_cancelled(source.next_event(), cancelled.as_mut()).await else {
            return;
        };
        let Some(first) = next else { return };
        // Whatever else the bytes already read decide goes in the same batch.
        let mut batch = Vec::with_capacity(8);
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match source.next_buffered_event() {
                Some(event) => batch.push(event),
                None => break,
            }
        }
        if !send_or_cancelled(&decoded_tx, batch, cancelled.as_mut()).await {
            return;
        }
    }
}

/// The mapper task's state: the completed items so far and where the outcome goes.
struct Mapper {
    decoded_rx: mpsc::Receiver<Batch>,
    events_tx: mpsc::Sender<Batch>,
    last_response_tx: Option<oneshot::Sender<LastResponse>>,
    items: Vec<ResponseItem>,
    diagnostics: StreamDiagnostics,
}

impl Mapper {
    async fn run(mut self, cancel: CancellationToken) {
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        loop {
            let Some(next) = unless_cancelled(self.decoded_rx.recv(), cancelled.as_mut()).await
            else {
                self.log_cancelled();
                return;
            };
            let Some(batch) = next else { return };
            let batch: Batch = batch
                .into_iter()
                .map(|next| match next {
                    Ok(event) => Ok(self.observe(event)),
                    Err(error) => Err(self.map_error(error)),
                })
                .collect();
            if !send_or_cancelled(&self.events_tx, batch, cancelled.as_mut()).await {
                self.log_cancelled();
                return;
            }
        }
    }

    /// Keeps completed items; on `Completed`, hands them over as the [`LastResponse`].
    fn observe(&mut self, event: ResponseEvent) -> ResponseEvent {
        match &event {
            ResponseEvent::OutputItemDone(item) => self.items.push(item.clone()),
            ResponseEvent::Completed { response_id, .. } => {
                let last = LastResponse {
                    response_id: response_id.clone(),
                    items: std::mem::take(&mut self.items),
                };
                tracing::debug!(
                    provider = %self.diagnostics.provider,
                    request_id = ?self.diagnostics.request_id,
                    response_id = %last.response_id,
                    items = last.items.len(),
                    "response completed"
                );
                if let Some(tx) = self.last_response_tx.take() {
                    // The consumer may not care; an unread outcome is fine.
                    let _ = tx.send(last);
                }
            }
            _ => {}
        }
        event
    }

    /// Provider errors go up unchanged in kind (the turn decides about re-sampling); the mapper
    /// records them with the provider, request id and how much had completed, because once the
    /// error is up the stream's context is gone.
    fn map_error(&mut self, error: StreamError) -> StreamError {
        tracing::warn!(
            provider = %self.diagnostics.provider,
            request_id = ?self.diagnostics.request_id,
            completed_items = self.items.len(),
            retryable = error.is_retryable(),
            %error,
            "response stream failed"
        );
        error
    }

    fn log_cancelled(&self) {
        tracing::debug!(
            provider = %self.diagnostics.provider,
            request_id = ?self.diagnostics.request_id,
            completed_items = self.items.len(),
            "response stream dropped by its consumer; cancelled"
        );
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
