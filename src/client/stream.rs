//! `ResponseStream`: the events of one response, decoded in the consumer's own poll.
//!
//! ```text
//! transport (HTTP body or WebSocket) ─▶ wire decoder ─▶ ResponseStream::next ─▶ turn
//!                                       (framing, policies,  (header events first,
//!                                        idle timeout)        provider-error logs)
//! ```
//!
//! There is no task and no channel between the transport and the turn: `next` asks the decoder
//! for an event the bytes already received decide, and only when there is none waits for more
//! input. A delta costs no hand-off, no wake-up of another task and no batch buffer.
//!
//! Memory stays bounded because nothing reads ahead of the consumer: while the turn is busy (for
//! instance blocked on a slow stdout), no bytes are taken from the transport, and the provider is
//! held back by the transport's own flow control (TCP window, HTTP/2 or WebSocket buffers).
//!
//! Cancellation is ownership: dropping the `ResponseStream` drops the decoder and the transport
//! with it, which closes the connection to the provider, at once and on the dropping task. Both
//! waits inside `next` keep their state in the decoder, so dropping a pending `next` (a `select!`
//! that lost) loses no event.

use std::future::Future;
use std::pin::Pin;

use crate::wire::{ResponseEvent, ResponseEventSource, StreamError};

/// Who the stream talks to, for logs and error context.
#[derive(Debug, Clone, Default)]
pub struct StreamDiagnostics {
    /// The provider's display name.
    pub provider: String,
    /// `x-request-id` of the response, when the provider sent one.
    pub request_id: Option<String>,
}

/// A future of the next event, borrowing its source.
type NextEvent<'a> =
    Pin<Box<dyn Future<Output = Option<Result<ResponseEvent, StreamError>>> + Send + 'a>>;

/// [`ResponseEventSource`] with its waiting future boxed, so one `ResponseStream` type serves
/// every transport. The box is paid once per wait for input, not per event: events the bytes
/// already decide come from [`ErasedSource::next_buffered`] without one.
trait ErasedSource: Send {
    fn next_waiting(&mut self) -> NextEvent<'_>;
    fn next_buffered(&mut self) -> Option<Result<ResponseEvent, StreamError>>;
}

impl<S: ResponseEventSource + Send> ErasedSource for S {
    fn next_waiting(&mut self) -> NextEvent<'_> {
        Box::pin(self.next_event())
    }

    fn next_buffered(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        self.next_buffered_event()
    }
}

pub struct ResponseStream {
    source: Box<dyn ErasedSource>,
    /// Events read from the response headers, handed out before the first decoded event.
    header_events: std::vec::IntoIter<ResponseEvent>,
    /// `output_item.done` items seen so far, for the logs.
    completed_items: usize,
    /// The stream yielded its terminal item (`Completed` or an error).
    ended: bool,
    diagnostics: StreamDiagnostics,
}

impl ResponseStream {
    /// A stream over `source`. `header_events` are delivered before the first decoded event.
    pub(super) fn new<S>(
        source: S,
        header_events: Vec<ResponseEvent>,
        diagnostics: StreamDiagnostics,
    ) -> ResponseStream
    where
        S: ResponseEventSource + Send + 'static,
    {
        ResponseStream {
            source: Box::new(source),
            header_events: header_events.into_iter(),
            completed_items: 0,
            ended: false,
            diagnostics,
        }
    }

    /// The next event; `None` once the stream has ended (after `Completed` or an error).
    ///
    /// Cancel-safe: dropping the returned future before it completes loses no event.
    pub async fn next(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        if let Some(event) = self.header_events.next() {
            return Some(Ok(event));
        }
        let next = match self.source.next_buffered() {
            Some(next) => next,
            None => self.source.next_waiting().await?,
        };
        Some(self.observe(next))
    }

    /// The provider's request id (`x-request-id`), for error reports and traces.
    pub fn request_id(&self) -> Option<&str> {
        self.diagnostics.request_id.as_deref()
    }

    /// Logs the end of the response with its context, which is gone once the event is up.
    fn observe(
        &mut self,
        next: Result<ResponseEvent, StreamError>,
    ) -> Result<ResponseEvent, StreamError> {
        match &next {
            Ok(ResponseEvent::OutputItemDone(_)) => self.completed_items += 1,
            Ok(ResponseEvent::Completed { response_id, .. }) => {
                self.ended = true;
                tracing::debug!(
                    provider = %self.diagnostics.provider,
                    request_id = ?self.diagnostics.request_id,
                    %response_id,
                    items = self.completed_items,
                    "response completed"
                );
            }
            // Provider errors go up unchanged in kind (the turn decides about re-sampling); they
            // are recorded here with the provider, request id and how much had completed.
            Err(error) => {
                self.ended = true;
                tracing::warn!(
                    provider = %self.diagnostics.provider,
                    request_id = ?self.diagnostics.request_id,
                    completed_items = self.completed_items,
                    retryable = error.is_retryable(),
                    %error,
                    "response stream failed"
                );
            }
            Ok(_) => {}
        }
        next
    }
}

impl Drop for ResponseStream {
    fn drop(&mut self) {
        if !self.ended {
            tracing::debug!(
                provider = %self.diagnostics.provider,
                request_id = ?self.diagnostics.request_id,
                completed_items = self.completed_items,
                "response stream dropped by its consumer; cancelled"
            );
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
