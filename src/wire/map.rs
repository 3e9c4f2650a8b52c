//! One Responses stream message (an SSE frame's data, or a WebSocket text message) → what it
//! means for the stream. Pure: no I/O, no state, no knowledge of the transport.
//!
//! The wire DTO is lenient (every field but `type` optional), so each event type re-checks the
//! fields it needs here; a known event missing them yields nothing rather than an empty delta or
//! a half item. Which outcome ends a stream, and when, is the transport's policy (`sse.rs`,
//! `websocket.rs`), not this module's.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::{ApiError, StreamError};
use super::event::{ResponseEvent, TokenUsage};
use super::item::ResponseItem;

/// What one message means for the stream.
#[derive(Debug, PartialEq)]
pub enum FrameOutcome {
    Event(ResponseEvent),
    /// Nothing to deliver (unknown type, not JSON, missing fields, an unparsable item).
    Skip,
    /// A classified provider failure (`response.failed`, `response.incomplete`, `error`), with
    /// the usage the failed response reported, if any (tokens it consumed are billed all the
    /// same). SSE saves it until EOF; WebSocket ends the read loop with it at once.
    SaveError {
        error: ApiError,
        usage: Option<TokenUsage>,
    },
    /// The stream cannot go on (a `response.completed` that does not parse).
    Fatal(StreamError),
}

/// The lenient wire shape of every Responses stream event; each event type uses a subset.
/// Strings that are usually escape-free borrow from the frame (`Cow`), so the common delta frame
/// allocates only for its `item_id` and `delta`.
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
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

/// `response` of `response.created` / `.failed` / `.incomplete`: every field optional, because
/// these frames only contribute what they carry. `usage` is kept unparsed so that a usage of an
/// unexpected shape costs only the usage, never the failure's classification.
#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    error: Option<WireErrorBody>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    usage: Option<serde_json::Value>,
}

impl WireResponse {
    fn token_usage(&mut self) -> Option<TokenUsage> {
        let usage = self.usage.take()?;
        match serde_json::from_value::<WireUsage>(usage) {
            Ok(usage) => Some(usage.into()),
            Err(error) => {
                tracing::debug!(%error, "ignoring a failed response's usage that does not parse");
                None
            }
        }
    }
}

/// `response` of `response.completed`: the id is required, so a completion that does not name
/// its response is a stream error rather than a success with an empty id.
#[derive(Deserialize)]
struct WireCompleted {
    id: String,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    end_turn: Option<bool>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: i64,
    #[serde(default)]
    input_tokens_details: Option<CachedDetails>,
    output_tokens: i64,
    #[serde(default)]
    output_tokens_details: Option<ReasoningDetails>,
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

/// The end-of-stream marker some providers send; not JSON, not an event.
const DONE_MARKER: &str = "[DONE]";

/// Maps the data of one frame to what it means. Text deltas, most of a stream, are read by a
/// dedicated reader first ([`super::text_delta`]); whatever it is not sure of takes the general
/// path, which decides every frame exactly as the reader would.
pub fn map_frame(data: &str) -> FrameOutcome {
    match super::text_delta::text_delta(data) {
        Some(event) => FrameOutcome::Event(event),
        None => map_frame_general(data),
    }
}

/// [`map_frame`] through the lenient DTO, for every kind of frame.
pub(super) fn map_frame_general(data: &str) -> FrameOutcome {
    let wire: WireEvent<'_> = match serde_json::from_str(data) {
        Ok(wire) => wire,
        Err(_) if data.trim() == DONE_MARKER => return FrameOutcome::Skip,
        Err(error) => {
            tracing::debug!(%error, "skipping a frame whose data is not a JSON event");
            return FrameOutcome::Skip;
        }
    };
    let kind = wire.kind.clone();
    match kind.as_ref() {
        "response.completed" => return map_completed(wire.response),
        "response.failed" => return failed_error(wire.response),
        "response.incomplete" => return incomplete_error(wire.response),
        "error" => {
            return FrameOutcome::SaveError {
                error: error_event(wire),
                usage: None,
            }
        }
        _ => {}
    }
    let Some(event) = map_content_event(wire) else {
        return FrameOutcome::Skip;
    };
    match event {
        Some(event) => FrameOutcome::Event(event),
        None => {
            tracing::debug!(event_type = %kind, "event missing its required fields; skipped");
            FrameOutcome::Skip
        }
    }
}

/// The events that carry content. `None`: an unknown type (ignored); `Some(None)`: a known type
/// missing its required fields.
fn map_content_event(wire: WireEvent<'_>) -> Option<Option<ResponseEvent>> {
    let event = match wire.kind.as_ref() {
        "response.output_text.delta" => map_text_delta(wire),
        "response.created" => Some(ResponseEvent::Created {
            response_id: parse_response(wire.response).and_then(|response| response.id),
        }),
        "response.output_item.added" => parse_item(wire.item).map(ResponseEvent::OutputItemAdded),
        "response.output_item.done" => parse_item(wire.item).map(ResponseEvent::OutputItemDone),
        "response.function_call_arguments.delta" => match (wire.item_id, wire.delta) {
            (Some(item_id), Some(delta)) => Some(ResponseEvent::FunctionCallArgumentsDelta {
                item_id,
                call_id: wire.call_id,
                delta,
            }),
            _ => None,
        },
        // Some servers key tool input by call id only: fall back to it, and keep it either way.
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
        "response.reasoning_summary_text.delta"
        | "response.reasoning_summary_part.added"
        | "response.reasoning_summary_text.done"
        | "response.reasoning_text.delta" => map_reasoning_event(wire),
        other => {
            tracing::trace!(
                event_type = other,
                "ignoring an unknown response event type"
            );
            return None;
        }
    };
    Some(event)
}

fn map_text_delta(wire: WireEvent<'_>) -> Option<ResponseEvent> {
    match (wire.item_id, wire.delta) {
        (Some(item_id), Some(delta)) => Some(ResponseEvent::OutputTextDelta { item_id, delta }),
        _ => None,
    }
}

/// Reasoning summaries are indexed by `summary_index`, raw reasoning by `content_index`; each
/// event needs its own index, or the consumer could not tell parts apart.
fn map_reasoning_event(wire: WireEvent<'_>) -> Option<ResponseEvent> {
    let item_id = wire.item_id?;
    match wire.kind.as_ref() {
        "response.reasoning_summary_text.delta" => Some(ResponseEvent::ReasoningSummaryDelta {
            item_id,
            delta: wire.delta?,
            summary_index: wire.summary_index?,
        }),
        "response.reasoning_summary_part.added" => Some(ResponseEvent::ReasoningSummaryPartAdded {
            item_id,
            summary_index: wire.summary_index?,
        }),
        "response.reasoning_summary_text.done" => Some(ResponseEvent::ReasoningSummaryDone {
            item_id,
            text: wire.text?,
            summary_index: wire.summary_index?,
        }),
        _ => Some(ResponseEvent::ReasoningContentDelta {
            item_id,
            delta: wire.delta?,
            content_index: wire.content_index?,
        }),
    }
}

fn parse_response(raw: Option<&RawValue>) -> Option<WireResponse> {
    serde_json::from_str::<WireResponse>(raw?.get()).ok()
}

fn parse_item(raw: Option<&RawValue>) -> Option<ResponseItem> {
    match serde_json::from_str(raw?.get()) {
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
        .and_then(|raw| {
            serde_json::from_str::<WireCompleted>(raw.get()).map_err(|e| e.to_string())
        });
    match parsed {
        Ok(response) => FrameOutcome::Event(ResponseEvent::Completed {
            response_id: response.id,
            token_usage: response.usage.map(TokenUsage::from),
            end_turn: response.end_turn,
        }),
        Err(reason) => FrameOutcome::Fatal(StreamError::BadCompleted(reason)),
    }
}

fn failed_error(raw: Option<&RawValue>) -> FrameOutcome {
    let mut response = parse_response(raw);
    let usage = response.as_mut().and_then(WireResponse::token_usage);
    let error = response
        .and_then(|response| response.error)
        .unwrap_or_default();
    let message = error
        .message
        .unwrap_or_else(|| "response.failed event received".to_string());
    FrameOutcome::SaveError {
        error: ApiError::classify(error.code.as_deref(), &message),
        usage,
    }
}

fn incomplete_error(raw: Option<&RawValue>) -> FrameOutcome {
    let mut response = parse_response(raw);
    let usage = response.as_mut().and_then(WireResponse::token_usage);
    let reason = response
        .and_then(|response| response.incomplete_details)
        .and_then(|details| details.reason)
        .unwrap_or_else(|| "unknown".to_string());
    FrameOutcome::SaveError {
        error: ApiError::Incomplete(format!("incomplete response returned, reason: {reason}")),
        usage,
    }
}

/// A top-level `error` event: `{code, message}` either flat or under `error`.
fn error_event(wire: WireEvent<'_>) -> ApiError {
    let body = wire.error.unwrap_or_default();
    let code = wire.code.or(body.code);
    let message = wire.message.or(body.message).unwrap_or_default();
    ApiError::classify(code.as_deref(), &message)
}
