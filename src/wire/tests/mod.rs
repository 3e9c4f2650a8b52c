//! Unit tests of the wire layer, fed from in-memory bytes and messages (no sockets, no tasks).
//!
//! - `sse_framer.rs` — the framer against the event-stream rules and a reference parser.
//! - `sse_framing.rs` — one transcript split at every byte offset decodes to the same events.
//! - `event_mapping.rs` — every `ResponseEvent` a frame can produce, and the skip policies.
//! - `stream_policies.rs` — when an SSE stream ends: saved errors, EOF, `completed`, idle timeout.
//! - `websocket.rs` — the same transcript over WebSocket messages, and its ending policy.
//! - `randomized.rs` — mutated transcripts, random chunking: the fuzz properties, bounded.
//! - `classification.rs` — provider error codes → `ApiError`.
//! - `text_delta_reader.rs` — the dedicated text-delta reader agrees with the general path.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a failing test should stop at the line that failed"
)]

mod classification;
mod event_mapping;
mod randomized;
mod sse_framer;
mod sse_framing;
mod stream_policies;
mod text_delta_reader;
mod websocket;

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

use super::event::{ResponseEvent, TokenUsage};
use super::item::{ContentItem, ReasoningSummary, ResponseItem};
use super::sse::SseEventStream;
use super::StreamError;

/// The transcript shared with the transport tests in `tests/` (the mock provider's format).
const FULL_RESPONSE: &str = include_str!("../../../tests/data/full_response.json");

/// Bound for every await, so a decoder bug fails instead of hanging.
const STEP: Duration = Duration::from_secs(5);

/// A generous idle timeout for tests that are not about it.
const IDLE: Duration = Duration::from_secs(60);

/// The events of the shared transcript: JSON objects, or raw strings sent as data verbatim.
fn transcript_events() -> Vec<Value> {
    let file: Value = serde_json::from_str(FULL_RESPONSE).unwrap();
    file["replies"][0]["events"].as_array().unwrap().clone()
}

/// How [`render_sse`] writes frames.
#[derive(Clone, Copy)]
struct SseStyle {
    line_end: &'static str,
    /// Adds a comment frame before every event, as keep-alive proxies do.
    comments: bool,
    /// `data:value` instead of `data: value`.
    no_space: bool,
}

const LF: SseStyle = SseStyle {
    line_end: "\n",
    comments: false,
    no_space: false,
};

const CRLF_WITH_COMMENTS: SseStyle = SseStyle {
    line_end: "\r\n",
    comments: true,
    no_space: true,
};

/// Writes one event as SSE text: an `event:` line for objects, one `data:` line per data line.
fn render_event(event: &Value, style: SseStyle, out: &mut String) {
    let eol = style.line_end;
    let data_prefix = if style.no_space { "data:" } else { "data: " };
    if style.comments {
        out.push_str(&format!(": keep-alive{eol}{eol}"));
    }
    let data = match event {
        Value::String(raw) => raw.clone(),
        other => {
            let name = other["type"].as_str().unwrap();
            out.push_str(&format!("event: {name}{eol}"));
            other.to_string()
        }
    };
    for line in data.split('\n') {
        out.push_str(&format!("{data_prefix}{line}{eol}"));
    }
    out.push_str(eol);
}

fn render_sse(events: &[Value], style: SseStyle) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        render_event(event, style, &mut out);
    }
    out.into_bytes()
}

/// Decodes `chunks` to the end of the stream.
async fn decode_chunks(chunks: Vec<Bytes>) -> Vec<Result<ResponseEvent, StreamError>> {
    let bytes = futures::stream::iter(chunks.into_iter().map(Ok::<Bytes, Infallible>));
    collect(SseEventStream::new(bytes, IDLE)).await
}

async fn collect<S, E>(stream: SseEventStream<S>) -> Vec<Result<ResponseEvent, StreamError>>
where
    S: futures::Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    collect_reading(stream, false).await
}

/// Like [`collect`], but after each awaited event takes every event the received bytes already
/// decide through `next_buffered_event`, the way the client's decoder task builds a burst.
async fn collect_in_bursts<S, E>(
    stream: SseEventStream<S>,
) -> Vec<Result<ResponseEvent, StreamError>>
where
    S: futures::Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    collect_reading(stream, true).await
}

async fn collect_reading<S, E>(
    mut stream: SseEventStream<S>,
    bursts: bool,
) -> Vec<Result<ResponseEvent, StreamError>>
where
    S: futures::Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut events = Vec::new();
    // Bounded: a correct decoder ends after at most one item per frame plus the terminal one.
    while events.len() < 10_000 {
        match tokio::time::timeout(STEP, stream.next_event()).await {
            Ok(Some(event)) => events.push(event),
            Ok(None) => return events,
            Err(_) => panic!("decoder did not finish; got {events:?}"),
        }
        while bursts && events.len() < 10_000 {
            match stream.next_buffered_event() {
                Some(event) => events.push(event),
                None => break,
            }
        }
    }
    panic!("decoder yielded too many events")
}

/// SSE text of frames given as JSON values.
fn sse_of(events: &[Value]) -> Vec<Bytes> {
    vec![Bytes::from(render_sse(events, LF))]
}

fn completed_frame() -> Value {
    json!({"type": "response.completed", "response": {"id": "resp_1", "usage": null}})
}

fn completed_event() -> ResponseEvent {
    ResponseEvent::Completed {
        response_id: "resp_1".to_string(),
        token_usage: None,
        end_turn: None,
    }
}

fn text_delta(delta: &str) -> ResponseEvent {
    ResponseEvent::OutputTextDelta {
        item_id: "msg_1".to_string(),
        delta: delta.to_string(),
    }
}

fn text_delta_frame(delta: &str) -> Value {
    json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": delta})
}

/// What the shared transcript must decode to, written out in full.
fn expected_full_response() -> Vec<Result<ResponseEvent, StreamError>> {
    let function_call = |arguments: &str| ResponseItem::FunctionCall {
        id: Some("fc_1".to_string()),
        call_id: "call_1".to_string(),
        name: "shell".to_string(),
        namespace: None,
        arguments: arguments.to_string(),
    };
    let custom_call = |input: &str| ResponseItem::CustomToolCall {
        id: Some("ctc_1".to_string()),
        call_id: "call_2".to_string(),
        name: "apply_patch".to_string(),
        input: input.to_string(),
    };
    let reasoning_delta = |delta: &str| ResponseEvent::ReasoningSummaryDelta {
        item_id: "rs_1".to_string(),
        delta: delta.to_string(),
        summary_index: 0,
    };
    let events = vec![
        ResponseEvent::Created {
            response_id: Some("resp_full".to_string()),
        },
        ResponseEvent::OutputItemAdded(ResponseItem::Reasoning {
            id: "rs_1".to_string(),
            summary: vec![],
            content: None,
            encrypted_content: None,
        }),
        ResponseEvent::ReasoningSummaryPartAdded {
            item_id: "rs_1".to_string(),
            summary_index: 0,
        },
        reasoning_delta("Thinking 🤔 about "),
        reasoning_delta("漢字"),
        ResponseEvent::ReasoningSummaryDone {
            item_id: "rs_1".to_string(),
            text: "Thinking 🤔 about 漢字".to_string(),
            summary_index: 0,
        },
        ResponseEvent::ReasoningContentDelta {
            item_id: "rs_1".to_string(),
            delta: "raw 💭".to_string(),
            content_index: 0,
        },
        ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
            id: "rs_1".to_string(),
            summary: vec![ReasoningSummary::SummaryText {
                text: "Thinking 🤔 about 漢字".to_string(),
            }],
            content: None,
            encrypted_content: Some("enc_rs_1".to_string()),
        }),
        ResponseEvent::OutputItemAdded(ResponseItem::Message {
            id: Some("msg_1".to_string()),
            role: "assistant".to_string(),
            content: vec![],
            phase: Some("final_answer".to_string()),
        }),
        text_delta("Héllo, "),
        text_delta("世界 👋🏽"),
        text_delta("!\n"),
        ResponseEvent::OutputItemDone(ResponseItem::Message {
            id: Some("msg_1".to_string()),
            role: "assistant".to_string(),
            content: vec![ContentItem::OutputText {
                text: "Héllo, 世界 👋🏽!\n".to_string(),
            }],
            phase: Some("final_answer".to_string()),
        }),
        ResponseEvent::OutputItemAdded(function_call("")),
        ResponseEvent::FunctionCallArgumentsDelta {
            item_id: "fc_1".to_string(),
            call_id: None,
            delta: "{\"command\":[\"echo\",".to_string(),
        },
        ResponseEvent::FunctionCallArgumentsDelta {
            item_id: "fc_1".to_string(),
            call_id: None,
            delta: "\"ünï\"]}".to_string(),
        },
        ResponseEvent::OutputItemDone(function_call("{\"command\":[\"echo\",\"ünï\"]}")),
        ResponseEvent::OutputItemAdded(custom_call("")),
        ResponseEvent::CustomToolCallInputDelta {
            item_id: "ctc_1".to_string(),
            call_id: Some("call_2".to_string()),
            delta: "*** Begin Patch\n".to_string(),
        },
        // No item_id on the wire: keyed by the call id, which is kept too.
        ResponseEvent::CustomToolCallInputDelta {
            item_id: "call_2".to_string(),
            call_id: Some("call_2".to_string()),
            delta: "*** End Patch".to_string(),
        },
        ResponseEvent::OutputItemDone(custom_call("*** Begin Patch\n*** End Patch")),
        ResponseEvent::OutputItemAdded(ResponseItem::WebSearchCall {
            id: Some("ws_1".to_string()),
            status: Some("in_progress".to_string()),
            action: None,
        }),
        ResponseEvent::OutputItemDone(ResponseItem::WebSearchCall {
            id: Some("ws_1".to_string()),
            status: Some("completed".to_string()),
            action: Some(json!({"type": "search", "query": "rust sse"})),
        }),
        ResponseEvent::OutputItemDone(ResponseItem::Other(json!({
            "id": "ig_1", "type": "image_generation_call", "status": "completed", "result": "aGk="
        }))),
        ResponseEvent::Completed {
            response_id: "resp_full".to_string(),
            token_usage: Some(TokenUsage {
                input_tokens: 100,
                cached_input_tokens: 20,
                output_tokens: 30,
                reasoning_output_tokens: 7,
                total_tokens: 130,
            }),
            end_turn: Some(false),
        },
    ];
    events.into_iter().map(Ok).collect()
}
