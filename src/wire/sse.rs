//! SSE bytes → frames (eventsource-stream) → [`ResponseEvent`], with the stream policies.
//!
//! eventsource-stream owns the framing: lines split across chunks, multi-byte UTF-8 split across
//! chunks, CRLF, multi-line `data:`, comments and `event:` names. [`super::map::map_frame`] owns
//! what a frame means. This file owns when the stream ends. Policies, in the order they apply:
//! - a transport (framing) error ends the stream with [`StreamError::Transport`];
//! - a frame whose data is not JSON, or an unknown event type, is skipped (logged);
//! - a known event missing its required fields yields no event;
//! - `response.failed` / `response.incomplete` / `error` are classified and *saved*: a later
//!   `response.completed` still wins, and EOF surfaces the saved error (saving rather than
//!   ending keeps any frames the provider sends after the failure);
//! - `response.completed` ends the stream at once, without waiting for EOF;
//! - EOF without `completed` is the saved error, else [`StreamError::ClosedBeforeCompleted`];
//! - the idle timeout restarts at every frame, so a long but lively stream never times out.

use std::fmt::Display;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStream, Eventsource};
use futures::{Stream, StreamExt};

use super::error::{ApiError, StreamError};
use super::event::{ResponseEvent, ResponseEventSource};
use super::map::{map_frame, FrameOutcome};

/// A stream of [`ResponseEvent`] decoded from an SSE byte stream.
pub struct SseEventStream<S> {
    frames: EventStream<S>,
    idle_timeout: Duration,
    saved_error: Option<ApiError>,
    finished: bool,
}

impl<S, E> SseEventStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Display,
{
    pub fn new(bytes: S, idle_timeout: Duration) -> SseEventStream<S> {
        SseEventStream {
            frames: bytes.eventsource(),
            idle_timeout,
            saved_error: None,
            finished: false,
        }
    }

    /// The next event, or the error that ended the stream. `None` after the stream has ended
    /// (after `Completed` or an error), so the stream yields at most one terminal item.
    pub async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        while !self.finished {
            // A fresh timeout per frame: the limit is on silence, not on the whole response.
            let frame = match tokio::time::timeout(self.idle_timeout, self.frames.next()).await {
                Err(_) => return self.finish(Err(StreamError::IdleTimeout(self.idle_timeout))),
                Ok(None) => {
                    let error = match self.saved_error.take() {
                        Some(api) => StreamError::Api(api),
                        None => StreamError::ClosedBeforeCompleted,
                    };
                    return self.finish(Err(error));
                }
                Ok(Some(Err(error))) => {
                    return self.finish(Err(StreamError::Transport(error.to_string())))
                }
                Ok(Some(Ok(frame))) => frame,
            };
            match map_frame(&frame.data) {
                FrameOutcome::Event(event @ ResponseEvent::Completed { .. }) => {
                    return self.finish(Ok(event))
                }
                FrameOutcome::Event(event) => return Some(Ok(event)),
                FrameOutcome::Skip => {}
                FrameOutcome::SaveError(error) => {
                    tracing::debug!(%error, "provider reported a failure; kept until EOF");
                    self.saved_error = Some(error);
                }
                FrameOutcome::Fatal(error) => return self.finish(Err(error)),
            }
        }
        None
    }

    fn finish(
        &mut self,
        last: Result<ResponseEvent, StreamError>,
    ) -> Option<Result<ResponseEvent, StreamError>> {
        self.finished = true;
        Some(last)
    }
}

impl<S, E> ResponseEventSource for SseEventStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
    E: Display + Send,
{
    async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        SseEventStream::next_event(self).await
    }
}
