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
//! with it, which closes the connection to the provider, at once and on the dropping task. The
//! wait for input lives in the stream, not in `next`'s future, so dropping a pending `next` (a
//! `select!` that lost) loses no event and leaves the wait where it was.

use std::pin::Pin;

use futures::{Stream, StreamExt};

use crate::wire::{ResponseEvent, ResponseEventSource, StreamError};

/// Who the stream talks to, for logs and error context.
#[derive(Debug, Clone, Default)]
pub struct StreamDiagnostics {
    /// The provider's display name.
    pub provider: String,
    /// `x-request-id` of the response, when the provider sent one.
    pub request_id: Option<String>,
}

/// The decoded events of one source, boxed once so one `ResponseStream` type serves every
/// transport. The wait for the next event lives inside this stream, not in the caller's future:
/// no allocation per wait, and a dropped `next` leaves the wait where it was.
type DecodedEvents = Pin<Box<dyn Stream<Item = Result<ResponseEvent, StreamError>> + Send>>;

fn decoded_events<S>(source: S) -> DecodedEvents
where
    S: ResponseEventSource + Send + 'static,
{
    let events = futures::stream::unfold(source, |mut source| async move {
        // An event the bytes already received decide needs no wait.
        let next = match source.next_buffered_event() {
            Some(next) => next,
            None => source.next_event().await?,
        };
        Some((next, source))
    });
    // Fused: once the source has ended, `next` keeps answering `None`.
    Box::pin(events.fuse())
}

pub struct ResponseStream {
    events: DecodedEvents,
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
            events: decoded_events(source),
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
        let next = self.events.next().await?;
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
