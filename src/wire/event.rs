//! `ResponseEvent`: the transport-agnostic events one streamed response yields, in wire order.
//! SSE and WebSocket both produce exactly these values.

use std::future::Future;

use serde::{Deserialize, Serialize};

use super::error::StreamError;
use super::item::ResponseItem;

/// A transport's decoded events: [`super::sse::SseEventStream`] and
/// [`super::websocket::WebSocketEventStream`] both implement it, so `client/` drives either with
/// the same task.
pub trait ResponseEventSource {
    /// The next event, or the error that ended the stream; `None` once it has ended.
    fn next_event(
        &mut self,
    ) -> impl Future<Output = Option<Result<ResponseEvent, StreamError>>> + Send;

    /// The next event if the input already received decides it, without waiting; `None` when
    /// only more input can tell (or the stream has ended). Lets a consumer take a burst of
    /// events in one go instead of one wake-up per event.
    fn next_buffered_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        None
    }
}

/// One event of a streamed response.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseEvent {
    /// `response.created`; carries no state the turn needs beyond the id.
    Created { response_id: Option<String> },
    /// The model that actually served the request (`openai-model` header); may differ from the one asked for.
    ServerModel(String),
    /// A rate-limit snapshot read from response headers.
    RateLimits(RateLimitSnapshot),
    /// The provider's current models-list version (`x-models-etag`), so a stale cache can be
    /// refreshed.
    ModelsEtag(String),
    /// `output_item.added`: opens streaming state for one item.
    OutputItemAdded(ResponseItem),
    /// `output_item.done`: the complete, authoritative item.
    OutputItemDone(ResponseItem),
    /// `response.output_text.delta`: visible text of the active message.
    OutputTextDelta { item_id: String, delta: String },
    /// `response.reasoning_summary_text.delta`, per summary part.
    ReasoningSummaryDelta {
        item_id: String,
        delta: String,
        summary_index: i64,
    },
    /// `response.reasoning_summary_part.added`: a new summary part begins.
    ReasoningSummaryPartAdded { item_id: String, summary_index: i64 },
    /// `response.reasoning_summary_text.done`: the full text of one summary part.
    ReasoningSummaryDone {
        item_id: String,
        text: String,
        summary_index: i64,
    },
    /// `response.reasoning_text.delta`: raw reasoning, per content part.
    ReasoningContentDelta {
        item_id: String,
        delta: String,
        content_index: i64,
    },
    /// `response.function_call_arguments.delta`.
    FunctionCallArgumentsDelta {
        item_id: String,
        call_id: Option<String>,
        delta: String,
    },
    /// `response.custom_tool_call_input.delta`; `item_id` falls back to the call id when the
    /// provider sends none, and `call_id` is kept as sent.
    CustomToolCallInputDelta {
        item_id: String,
        call_id: Option<String>,
        delta: String,
    },
    /// The usage a failed or incomplete response reported (`response.failed` /
    /// `response.incomplete` carrying `usage`). Delivered only when that failure ends the
    /// stream, directly before the error, so a `completed` that wins over a saved failure is
    /// never counted twice.
    FailedUsage(TokenUsage),
    /// `response.completed`: the success barrier; nothing after it belongs to this response.
    Completed {
        response_id: String,
        token_usage: Option<TokenUsage>,
        end_turn: Option<bool>,
    },
}

/// Token usage of one response, normalised from the provider's nested shape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_output_tokens: i64,
    pub total_tokens: i64,
}

/// One rate-limit window as reported in `x-codex-*` headers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateLimitWindow {
    pub used_percent: f64,
    pub window_minutes: Option<i64>,
    pub resets_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateLimitSnapshot {
    pub primary: Option<RateLimitWindow>,
    pub secondary: Option<RateLimitWindow>,
}
