//! SSE bytes → frames ([`super::sse_frame::SseFramer`]) → [`ResponseEvent`], with the stream
//! policies.
//!
//! The framer owns the framing: lines split across chunks, multi-byte UTF-8 split across chunks,
//! CRLF, multi-line `data:`, comments and `event:` names. [`super::map::map_frame`] owns what a
//! frame means. This file owns when the stream ends. Policies, in the order they apply:
//! - a transport (framing) error, or a frame growing past
//!   [`MAX_FRAME_BYTES`](super::sse_frame::MAX_FRAME_BYTES), ends the stream with
//!   [`StreamError::Transport`];
//! - a frame whose data is not JSON, or an unknown event type, is skipped (logged);
//! - a known event missing its required fields yields no event;
//! - `response.failed` / `response.incomplete` / `error` are classified and *saved*: a later
//!   `response.completed` still wins, and EOF surfaces the saved error (saving rather than
//!   ending keeps any frames the provider sends after the failure);
//! - `response.completed` ends the stream at once, without waiting for EOF;
//! - EOF without `completed` is the saved error, else [`StreamError::ClosedBeforeCompleted`];
//!   when the saved failure reported usage, [`ResponseEvent::FailedUsage`] comes just before it;
//! - the idle timeout restarts at every frame, so a long but lively stream never times out.

use std::fmt::Display;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use super::error::{ApiError, StreamError};
use super::event::{ResponseEvent, ResponseEventSource, TokenUsage};
use super::map::{map_frame, FrameOutcome};
use super::sse_frame::{SseFrame, SseFramer, MAX_FRAME_BYTES};

/// A stream of [`ResponseEvent`] decoded from an SSE byte stream.
pub struct SseEventStream<S> {
    bytes: S,
    framer: SseFramer,
    /// The byte stream returned `None`; it is not polled again.
    bytes_ended: bool,
    idle_timeout: Duration,
    saved_error: Option<ApiError>,
    /// The usage the saved failure reported; replaced together with `saved_error`.
    saved_usage: Option<TokenUsage>,
    /// The error that ends the stream, due after the failed response's usage went out.
    pending_error: Option<StreamError>,
    finished: bool,
}

impl<S, E> SseEventStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Display,
{
    pub fn new(bytes: S, idle_timeout: Duration) -> SseEventStream<S> {
        SseEventStream {
            bytes,
            framer: SseFramer::new(),
            bytes_ended: false,
            idle_timeout,
            saved_error: None,
            saved_usage: None,
            pending_error: None,
            finished: false,
        }
    }

    /// The next event, or the error that ended the stream. `None` after the stream has ended
    /// (after `Completed` or an error), so the stream yields at most one terminal item.
    pub async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        while !self.finished {
            if let Some(error) = self.pending_error.take() {
                return self.finish(Err(error));
            }
            let frame = match self.next_frame_within_idle_timeout().await {
                Err(_) => return self.finish(Err(StreamError::IdleTimeout(self.idle_timeout))),
                Ok(Ok(None)) => return self.end_at_eof(),
                Ok(Err(error)) => return self.finish(Err(StreamError::Transport(error))),
                Ok(Ok(Some(frame))) => frame,
            };
            match map_frame(&frame.data) {
                FrameOutcome::Event(event @ ResponseEvent::Completed { .. }) => {
                    return self.finish(Ok(event))
                }
                FrameOutcome::Event(event) => return Some(Ok(event)),
                FrameOutcome::Skip => {}
                FrameOutcome::SaveError { error, usage } => {
                    tracing::debug!(%error, "provider reported a failure; kept until EOF");
                    self.saved_error = Some(error);
                    self.saved_usage = usage;
                }
                FrameOutcome::Fatal(error) => return self.finish(Err(error)),
            }
        }
        None
    }

    /// EOF before `completed`: the saved failure (its usage first, when it reported some), else
    /// a plain early close.
    fn end_at_eof(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        let Some(api) = self.saved_error.take() else {
            return self.finish(Err(StreamError::ClosedBeforeCompleted));
        };
        match self.saved_usage.take() {
            Some(usage) => {
                self.pending_error = Some(StreamError::Api(api));
                Some(Ok(ResponseEvent::FailedUsage(usage)))
            }
            None => self.finish(Err(StreamError::Api(api))),
        }
    }

    /// The next frame, waiting at most the idle timeout for it. A fresh timeout per frame: the
    /// limit is on silence, not on the whole response. A frame already buffered needs no wait, and
    /// arming no timer for it keeps a timer registration off the path of most frames.
    async fn next_frame_within_idle_timeout(
        &mut self,
    ) -> Result<Result<Option<SseFrame>, String>, tokio::time::error::Elapsed> {
        if let Some(frame) = self.framer.next_frame() {
            return Ok(Ok(Some(frame)));
        }
        tokio::time::timeout(self.idle_timeout, self.next_frame()).await
    }

    /// Reads until the framer completes a frame; `Ok(None)` at EOF.
    async fn next_frame(&mut self) -> Result<Option<SseFrame>, String> {
        // Bounded by the byte stream: every iteration consumes one chunk of it.
        loop {
            if let Some(frame) = self.framer.next_frame() {
                return Ok(Some(frame));
            }
            if self.framer.frame_too_large() {
                return Err(format!(
                    "an SSE frame exceeded {MAX_FRAME_BYTES} bytes without ending"
                ));
            }
            if self.bytes_ended {
                return Ok(None);
            }
            match self.bytes.next().await {
                Some(Ok(chunk)) => self.framer.push(&chunk),
                Some(Err(error)) => return Err(error.to_string()),
                None => {
                    self.bytes_ended = true;
                    self.framer.finish();
                }
            }
        }
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
