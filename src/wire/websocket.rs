//! Responses WebSocket messages → [`ResponseEvent`]: the same events as SSE from the same
//! mapping ([`super::map::map_frame`]), with the WebSocket transport's own ending policy.
//!
//! Each text message is one event (no SSE framing). Unlike SSE, a provider failure
//! (`response.failed`, `response.incomplete`, `error`) ends the read loop at once (after
//! [`ResponseEvent::FailedUsage`] when it reported usage): the connection
//! carries one response at a time and nothing useful follows a failure on it. `completed` ends the
//! stream without waiting for the socket to close; a close or EOF before it is an error; the idle
//! timeout restarts at every message. The socket itself belongs to `client/`, which converts its
//! messages into [`WebSocketMessage`] so this module needs no WebSocket library.

use std::fmt::Display;
use std::time::Duration;

use futures::{Stream, StreamExt};
use serde::Serialize;

use super::error::StreamError;
use super::event::{ResponseEvent, ResponseEventSource};
use super::map::{map_frame, FrameOutcome};
use super::request::ResponsesRequest;

/// A WebSocket message, as far as the Responses stream cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebSocketMessage {
    /// A text message: one Responses event as JSON.
    Text(String),
    /// The peer closed the connection.
    Close,
    /// Ping, pong, binary: nothing for the stream (they still restart the idle timeout).
    Other,
}

/// The first message on the socket: the request, tagged `response.create`.
#[derive(Serialize)]
struct ResponseCreate<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    request: &'a ResponsesRequest,
}

/// The `response.create` message carrying `request`.
pub fn response_create_message(request: &ResponsesRequest) -> serde_json::Result<String> {
    serde_json::to_string(&ResponseCreate {
        kind: "response.create",
        request,
    })
}

/// A stream of [`ResponseEvent`] decoded from WebSocket messages.
pub struct WebSocketEventStream<S> {
    messages: S,
    idle_timeout: Duration,
    /// The error that ends the stream, due after the failed response's usage went out.
    pending_error: Option<StreamError>,
    finished: bool,
}

impl<S, E> WebSocketEventStream<S>
where
    S: Stream<Item = Result<WebSocketMessage, E>> + Unpin,
    E: Display,
{
    pub fn new(messages: S, idle_timeout: Duration) -> WebSocketEventStream<S> {
        WebSocketEventStream {
            messages,
            idle_timeout,
            pending_error: None,
            finished: false,
        }
    }

    /// The next event, or the error that ended the stream; `None` after it has ended.
    pub async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        while !self.finished {
            if let Some(error) = self.pending_error.take() {
                return self.finish(Err(error));
            }
            let message = match tokio::time::timeout(self.idle_timeout, self.messages.next()).await
            {
                Err(_) => return self.finish(Err(StreamError::IdleTimeout(self.idle_timeout))),
                Ok(None) | Ok(Some(Ok(WebSocketMessage::Close))) => {
                    return self.finish(Err(StreamError::ClosedBeforeCompleted))
                }
                Ok(Some(Err(error))) => {
                    return self.finish(Err(StreamError::Transport(error.to_string())))
                }
                Ok(Some(Ok(WebSocketMessage::Other))) => continue,
                Ok(Some(Ok(WebSocketMessage::Text(text)))) => text,
            };
            match map_frame(&message) {
                FrameOutcome::Event(event @ ResponseEvent::Completed { .. }) => {
                    return self.finish(Ok(event))
                }
                FrameOutcome::Event(event) => return Some(Ok(event)),
                FrameOutcome::Skip => {}
                FrameOutcome::SaveError {
                    error,
                    usage: Some(usage),
                } => {
                    // The usage first, then the failure on the next call.
                    self.pending_error = Some(StreamError::Api(error));
                    return Some(Ok(ResponseEvent::FailedUsage(usage)));
                }
                FrameOutcome::SaveError { error, usage: None } => {
                    return self.finish(Err(StreamError::Api(error)))
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

impl<S, E> ResponseEventSource for WebSocketEventStream<S>
where
    S: Stream<Item = Result<WebSocketMessage, E>> + Unpin + Send,
    E: Display + Send,
{
    async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        WebSocketEventStream::next_event(self).await
    }
}
