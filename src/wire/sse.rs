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

use tokio::time::Instant;

use bytes::Bytes;
use futures::{FutureExt, Stream, StreamExt};

use super::error::{ApiError, StreamError};
use super::event::{ResponseEvent, ResponseEventSource, TokenUsage};
use super::map::{map_frame, FrameOutcome};
use super::sse_frame::{SseFramer, MAX_FRAME_BYTES};

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
    /// When the wait for the next frame began; `None` while frames are being taken.
    waiting_since: Option<Instant>,
}

/// What the buffered bytes say about the next event.
enum Buffered {
    /// The next event, the terminal error, or `None` once the stream has ended.
    Decided(Option<Result<ResponseEvent, StreamError>>),
    /// Only more bytes can tell.
    NeedInput,
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
            waiting_since: None,
        }
    }

    /// The next event, or the error that ended the stream. `None` after the stream has ended
    /// (after `Completed` or an error), so the stream yields at most one terminal item.
    pub async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        // Bounded by the byte stream: every iteration consumes one chunk of it, or ends.
        loop {
            match self.decide_from_buffer() {
                Buffered::Decided(outcome) => return outcome,
                Buffered::NeedInput => {}
            }
            // The limit is on silence between frames, not on the whole response: the clock
            // starts when the last frame was taken and only runs while we wait for bytes.
            let since = *self.waiting_since.get_or_insert_with(Instant::now);
            match tokio::time::timeout_at(since + self.idle_timeout, self.bytes.next()).await {
                Err(_) => return self.finish(Err(StreamError::IdleTimeout(self.idle_timeout))),
                Ok(Some(Ok(chunk))) => self.framer.push(&chunk),
                Ok(Some(Err(error))) => {
                    return self.finish(Err(StreamError::Transport(error.to_string())))
                }
                Ok(None) => {
                    self.bytes_ended = true;
                    self.framer.finish();
                }
            }
        }
    }

    /// The next event if the bytes already received decide it, without waiting for more. Bytes
    /// the transport already holds count as received: an HTTP body hands over one chunk at a
    /// time, and a provider writing one chunk per event would otherwise never fill a burst.
    pub fn next_buffered_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        // Bounded: every round consumes one chunk the transport already had, or returns.
        loop {
            if let Buffered::Decided(outcome) = self.decide_from_buffer() {
                return outcome;
            }
            // Polled once without waiting; a later `next_event` polls again with a real waker.
            match self.bytes.next().now_or_never()? {
                Some(Ok(chunk)) => self.framer.push(&chunk),
                Some(Err(error)) => {
                    return self.finish(Err(StreamError::Transport(error.to_string())))
                }
                None => {
                    self.bytes_ended = true;
                    self.framer.finish();
                }
            }
        }
    }

    /// Applies the stream policies to the frames already buffered.
    fn decide_from_buffer(&mut self) -> Buffered {
        // Bounded by the buffer: every iteration consumes one frame.
        while !self.finished {
            if let Some(error) = self.pending_error.take() {
                return Buffered::Decided(self.finish(Err(error)));
            }
            let Some(outcome) = self.framer.next_data().map(map_frame) else {
                if self.framer.frame_too_large() {
                    let error =
                        format!("an SSE frame exceeded {MAX_FRAME_BYTES} bytes without ending");
                    return Buffered::Decided(self.finish(Err(StreamError::Transport(error))));
                }
                if !self.bytes_ended {
                    return Buffered::NeedInput;
                }
                return Buffered::Decided(self.end_at_eof());
            };
            self.waiting_since = None;
            match outcome {
                FrameOutcome::Event(event @ ResponseEvent::Completed { .. }) => {
                    return Buffered::Decided(self.finish(Ok(event)))
                }
                FrameOutcome::Event(event) => return Buffered::Decided(Some(Ok(event))),
                FrameOutcome::Skip => {}
                FrameOutcome::SaveError { error, usage } => {
                    tracing::debug!(%error, "provider reported a failure; kept until EOF");
                    self.saved_error = Some(error);
                    self.saved_usage = usage;
                }
                FrameOutcome::Fatal(error) => return Buffered::Decided(self.finish(Err(error))),
            }
        }
        Buffered::Decided(None)
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

    fn next_buffered_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        SseEventStream::next_buffered_event(self)
    }
}
