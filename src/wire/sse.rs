//! SSE bytes → frames (eventsource-stream) → [`ResponseEvent`].
//!
//! Failure policies, in the order they apply:
//! - a transport error ends the stream with [`StreamError::Transport`];
//! - a frame whose data is not JSON, or an unknown event type, is skipped (logged);
//! - a known event missing its required fields yields no event;
//! - `response.failed` / `response.incomplete` / `error` are classified and *saved*: a later
//!   `response.completed` still wins, and EOF surfaces the saved error;
//! - `response.completed` ends the stream at once, without waiting for EOF;
//! - the idle timeout restarts at every frame.

use std::fmt::Display;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStream, Eventsource};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::{ApiError, StreamError};
use super::event::{ResponseEvent, TokenUsage};
use super::item::ResponseItem;

/// What one frame means for the stream.
#[derive(Debug, PartialEq)]
pub enum FrameOutcome {
    Event(ResponseEvent),
    /// Nothing to deliver (unknown type, not JSON, missing fields, an unparsable item).
    Skip,
    /// A provider failure to keep until EOF, unless `completed` arrives first.
    SaveError(ApiError),
    /// The stream cannot go on.
    Fatal(StreamError),
}

/// The lenient wire shape of every Responses stream event; each event type uses a subset.
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(default, borrow)]
    item: Option<&'a RawValue>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    summary_index: Option<i64>,
    #[serde(default)]
    content_index: Option<i64>,
    #[serde(default, borrow)]
    response: Option<&'a RawValue>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    error: Option<WireErrorBody>,
}

#[derive(Deserialize, Default)]
struct WireErrorBody {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    end_turn: Option<bool>,
    #[serde(default)]
    error: Option<WireErrorBody>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: i64,
    #[serde(default)]
    input_tokens_details: Option<CachedDetails>,
    #[serde(default)]
    output_tokens: i64,
    #[serde(default)]
    output_tokens_details: Option<ReasoningDetails>,
    #[serde(default)]
    total_tokens: i64,
}

#[derive(Deserialize)]
struct CachedDetails {
    #[serde(default)]
    cached_tokens: i64,
}

#[derive(Deserialize)]
struct ReasoningDetails {
    #[serde(default)]
    reasoning_tokens: i64,
}

impl From<WireUsage> for TokenUsage {
    fn from(usage: WireUsage) -> TokenUsage {
        TokenUsage {
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.input_tokens_details.map_or(0, |d| d.cached_tokens),
            output_tokens: usage.output_tokens,
            reasoning_output_tokens: usage
                .output_tokens_details
                .map_or(0, |d| d.reasoning_tokens),
            total_tokens: usage.total_tokens,
        }
    }
}

/// Maps the data of one SSE frame to what it means. Pure: no I/O, no state.
pub fn map_frame(data: &str) -> FrameOutcome {
    let wire: WireEvent<'_> = match serde_json::from_str(data) {
        Ok(wire) => wire,
        Err(error) => {
            tracing::debug!(%error, "skipping SSE frame whose data is not a JSON event");
            return FrameOutcome::Skip;
        }
    };
    let event = match wire.kind {
        "response.created" => Some(ResponseEvent::Created {
            response_id: wire
                .response
                .and_then(|raw| serde_json::from_str::<WireResponse>(raw.get()).ok())
                .and_then(|response| response.id),
        }),
        "response.output_item.added" => parse_item(wire.item).map(ResponseEvent::OutputItemAdded),
        "response.output_item.done" => parse_item(wire.item).map(ResponseEvent::OutputItemDone),
        "response.output_text.delta" => match (wire.item_id, wire.delta) {
            (Some(item_id), Some(delta)) => Some(ResponseEvent::OutputTextDelta { item_id, delta }),
            _ => None,
        },
        "response.reasoning_summary_text.delta" => {
            match (wire.item_id, wire.delta, wire.summary_index) {
                (Some(item_id), Some(delta), Some(summary_index)) => {
                    Some(ResponseEvent::ReasoningSummaryDelta {
                        item_id,
                        delta,
                        summary_index,
                    })
                }
                _ => None,
            }
        }
        "response.reasoning_summary_part.added" => match (wire.item_id, wire.summary_index) {
            (Some(item_id), Some(summary_index)) => {
                Some(ResponseEvent::ReasoningSummaryPartAdded {
                    item_id,
                    summary_index,
                })
            }
            _ => None,
        },
        "response.reasoning_summary_text.done" => {
            match (wire.item_id, wire.text, wire.summary_index) {
                (Some(item_id), Some(text), Some(summary_index)) => {
                    Some(ResponseEvent::ReasoningSummaryDone {
                        item_id,
                        text,
                        summary_index,
                    })
                }
                _ => None,
            }
        }
        "response.reasoning_text.delta" => match (wire.item_id, wire.delta, wire.content_index) {
            (Some(item_id), Some(delta), Some(content_index)) => {
                Some(ResponseEvent::ReasoningContentDelta {
                    item_id,
                    delta,
                    content_index,
                })
            }
            _ => None,
        },
        "response.function_call_arguments.delta" => match (wire.item_id, wire.delta) {
            (Some(item_id), Some(delta)) => Some(ResponseEvent::FunctionCallArgumentsDelta {
                item_id,
                call_id: wire.call_id,
                delta,
            }),
            _ => None,
        },
        "response.custom_tool_call_input.delta" => {
            match (wire.item_id.or_else(|| wire.call_id.clone()), wire.delta) {
                (Some(item_id), Some(delta)) => Some(ResponseEvent::CustomToolCallInputDelta {
                    item_id,
                    call_id: wire.call_id,
                    delta,
                }),
                _ => None,
            }
        }
        "response.completed" => return map_completed(wire.response),
        "response.failed" => return FrameOutcome::SaveError(failed_error(wire.response)),
        "response.incomplete" => return FrameOutcome::SaveError(incomplete_error(wire.response)),
        "error" => {
            let body = wire.error.unwrap_or_default();
            let code = wire.code.or(body.code);
            let message = wire.message.or(body.message).unwrap_or_default();
            return FrameOutcome::SaveError(ApiError::classify(code.as_deref(), &message));
        }
        other => {
            tracing::trace!(event_type = other, "ignoring unknown response event type");
            return FrameOutcome::Skip;
        }
    };
    match event {
        Some(event) => FrameOutcome::Event(event),
        None => {
            tracing::debug!(
                event_type = wire.kind,
                "event missing required fields; skipped"
            );
            FrameOutcome::Skip
        }
    }
}

fn parse_item(raw: Option<&RawValue>) -> Option<ResponseItem> {
    let raw = raw?;
    match serde_json::from_str(raw.get()) {
        Ok(item) => Some(item),
        Err(error) => {
            tracing::debug!(%error, "skipping an output item that does not parse");
            None
        }
    }
}

fn map_completed(raw: Option<&RawValue>) -> FrameOutcome {
    let parsed = raw
        .ok_or_else(|| "missing `response`".to_string())
        .and_then(|raw| serde_json::from_str::<WireResponse>(raw.get()).map_err(|e| e.to_string()));
    match parsed {
        Ok(response) => FrameOutcome::Event(ResponseEvent::Completed {
            response_id: response.id.unwrap_or_default(),
            token_usage: response.usage.map(TokenUsage::from),
            end_turn: response.end_turn,
        }),
        Err(reason) => FrameOutcome::Fatal(StreamError::BadCompleted(reason)),
    }
}

fn failed_error(raw: Option<&RawValue>) -> ApiError {
    let error = raw
        .and_then(|raw| serde_json::from_str::<WireResponse>(raw.get()).ok())
        .and_then(|response| response.error)
        .unwrap_or_default();
    let message = error
        .message
        .unwrap_or_else(|| "response.failed without an error message".to_string());
    ApiError::classify(error.code.as_deref(), &message)
}

fn incomplete_error(raw: Option<&RawValue>) -> ApiError {
    let reason = raw
        .and_then(|raw| serde_json::from_str::<WireResponse>(raw.get()).ok())
        .and_then(|response| response.incomplete_details)
        .and_then(|details| details.reason)
        .unwrap_or_else(|| "unknown".to_string());
    ApiError::Incomplete(format!("incomplete response returned, reason: {reason}"))
}

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

    /// The next event, or the error that ended the stream. `None` after the stream has ended.
    pub async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        while !self.finished {
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
                FrameOutcome::SaveError(error) => self.saved_error = Some(error),
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
