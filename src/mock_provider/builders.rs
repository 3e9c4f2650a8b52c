//! Builders for realistic OpenAI Responses SSE transcripts.
//!
//! This module owns the JSON shapes of the Responses streaming events the
//! mock sends: every event has a `"type"` and a `"sequence_number"`. It knows
//! nothing about HTTP.
//!
//! [`ResponseBuilder`] chains the parts of one response and numbers events and
//! output items continuously; prefer it when a test cares about numbering. The
//! free functions (`response_created`, `text_message`, …) build one part each,
//! numbered from 0 with output index 0; concatenate them and pass the result
//! through [`renumber`] if continuous numbering matters.

use serde_json::{json, Value};

use std::time::Duration;

use super::script::{Reply, SseEvent, SseReply};
use super::sse::SENT_AT_US_PLACEHOLDER;

/// Token usage reported in `response.completed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// `input_tokens`.
    pub input: u64,
    /// `input_tokens_details.cached_tokens`.
    pub cached: u64,
    /// `output_tokens`.
    pub output: u64,
    /// `output_tokens_details.reasoning_tokens`.
    pub reasoning: u64,
    /// `total_tokens`.
    pub total: u64,
}

impl Usage {
    /// The usage that [`simple_text_response`] reports: 100 input (20
    /// cached), 30 output (7 reasoning), 130 total.
    pub fn example() -> Usage {
        Usage {
            input: 100,
            cached: 20,
            output: 30,
            reasoning: 7,
            total: 130,
        }
    }

    fn to_json(self) -> Value {
        json!({
            "input_tokens": self.input,
            "input_tokens_details": { "cached_tokens": self.cached },
            "output_tokens": self.output,
            "output_tokens_details": { "reasoning_tokens": self.reasoning },
            "total_tokens": self.total,
        })
    }
}

/// A fixed timestamp keeps transcripts deterministic.
const CREATED_AT: u64 = 1_700_000_000;

/// Builds the events of one streamed response, numbering `sequence_number`
/// and `output_index` as the real API does.
#[derive(Debug, Clone)]
pub struct ResponseBuilder {
    response_id: String,
    events: Vec<SseEvent>,
    next_sequence: u64,
    next_output_index: u64,
}

impl ResponseBuilder {
    /// An empty stream for the response `response_id`.
    pub fn new(response_id: impl Into<String>) -> ResponseBuilder {
        ResponseBuilder {
            response_id: response_id.into(),
            events: Vec::new(),
            next_sequence: 0,
            next_output_index: 0,
        }
    }

    /// Appends a custom event; `sequence_number` is filled in.
    pub fn event(mut self, mut value: Value) -> ResponseBuilder {
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "sequence_number".to_owned(),
                Value::from(self.next_sequence),
            );
        }
        self.next_sequence += 1;
        self.events.push(SseEvent::json(&value));
        self
    }

    /// Appends a preformatted event; the caller already put `sequence` in it.
    fn push_preformatted(&mut self, event: &'static str, data: String) {
        self.next_sequence += 1;
        self.events.push(SseEvent {
            event: Some(event.to_owned()),
            data,
        });
    }

    fn take_output_index(&mut self) -> u64 {
        let index = self.next_output_index;
        self.next_output_index += 1;
        index
    }

    /// `response.created` with an empty, in-progress response.
    pub fn created(self) -> ResponseBuilder {
        let response = json!({
            "id": self.response_id, "object": "response", "created_at": CREATED_AT,
            "status": "in_progress", "output": [],
        });
        self.event(json!({ "type": "response.created", "response": response }))
    }

    /// An assistant message streamed as `deltas`.
    pub fn text_message(self, item_id: &str, deltas: &[&str]) -> ResponseBuilder {
        self.message(item_id, None, deltas)
    }

    /// An assistant message carrying a `"phase"` (e.g. `"commentary"`).
    pub fn text_message_with_phase(
        self,
        item_id: &str,
        phase: &str,
        deltas: &[&str],
    ) -> ResponseBuilder {
        self.message(item_id, Some(phase), deltas)
    }

    fn message(mut self, item_id: &str, phase: Option<&str>, deltas: &[&str]) -> ResponseBuilder {
        let output_index = self.take_output_index();
        let mut item = json!({
            "id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": [],
        });
        if let (Some(phase), Some(object)) = (phase, item.as_object_mut()) {
            object.insert("phase".to_owned(), Value::from(phase));
        }
        self = self.event(json!({ "type": "response.output_item.added", "output_index": output_index, "item": item.clone() }));
        let item_id_json = Value::from(item_id).to_string();
        for delta in deltas {
            let delta_json = Value::from(*delta).to_string();
            self.push_text_delta(&item_id_json, output_index, &delta_json);
        }
        item["status"] = Value::from("completed");
        item["content"] =
            json!([{ "type": "output_text", "text": deltas.concat(), "annotations": [] }]);
        self.event(json!({ "type": "response.output_item.done", "output_index": output_index, "item": item }))
    }

    /// Deltas are formatted by hand: benchmarks build tens of thousands of them
    /// and going through `json!` for each would dominate their setup time.
    fn push_text_delta(&mut self, item_id_json: &str, output_index: u64, delta_json: &str) {
        let sequence = self.next_sequence;
        let data = format!(
            "{{\"type\":\"response.output_text.delta\",\"sequence_number\":{sequence},\"item_id\":{item_id_json},\
             \"output_index\":{output_index},\"content_index\":0,\"delta\":{delta_json}}}"
        );
        self.push_preformatted("response.output_text.delta", data);
    }

    /// A reasoning item with one summary part per entry of `summaries`, each
    /// streamed as the given deltas.
    pub fn reasoning(mut self, item_id: &str, summaries: &[&[&str]]) -> ResponseBuilder {
        let output_index = self.take_output_index();
        let added_item = json!({ "id": item_id, "type": "reasoning", "summary": [] });
        self = self.event(json!({ "type": "response.output_item.added", "output_index": output_index, "item": added_item }));
        let mut summary_parts = Vec::new();
        for (summary_index, deltas) in summaries.iter().enumerate() {
            let part = json!({ "item_id": item_id, "output_index": output_index, "summary_index": summary_index });
            self = self.event(with_fields(
                &part,
                "response.reasoning_summary_part.added",
                json!({
                    "part": { "type": "summary_text", "text": "" },
                }),
            ));
            for delta in *deltas {
                self = self.event(with_fields(
                    &part,
                    "response.reasoning_summary_text.delta",
                    json!({ "delta": delta }),
                ));
            }
            let text = deltas.concat();
            self = self.event(with_fields(
                &part,
                "response.reasoning_summary_text.done",
                json!({ "text": text }),
            ));
            summary_parts.push(json!({ "type": "summary_text", "text": text }));
        }
        let done_item = json!({
            "id": item_id, "type": "reasoning", "summary": summary_parts,
            "encrypted_content": format!("enc_{item_id}"),
        });
        self.event(json!({ "type": "response.output_item.done", "output_index": output_index, "item": done_item }))
    }

    /// A `function_call` item whose arguments arrive in two or three deltas.
    pub fn function_call(
        mut self,
        item_id: &str,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> ResponseBuilder {
        let output_index = self.take_output_index();
        let mut item = json!({
            "id": item_id, "type": "function_call", "status": "in_progress",
            "call_id": call_id, "name": name, "arguments": "",
        });
        self = self.event(json!({ "type": "response.output_item.added", "output_index": output_index, "item": item.clone() }));
        for piece in split_text(arguments, 3) {
            self = self.event(json!({
                "type": "response.function_call_arguments.delta",
                "item_id": item_id, "output_index": output_index, "delta": piece,
            }));
        }
        self = self.event(json!({
            "type": "response.function_call_arguments.done",
            "item_id": item_id, "output_index": output_index, "arguments": arguments,
        }));
        item["status"] = Value::from("completed");
        item["arguments"] = Value::from(arguments);
        self.event(json!({ "type": "response.output_item.done", "output_index": output_index, "item": item }))
    }

    /// `response.completed` with `usage`, and `end_turn` when given.
    pub fn completed(self, usage: Usage, end_turn: Option<bool>) -> ResponseBuilder {
        let mut response = json!({
            "id": self.response_id, "object": "response", "created_at": CREATED_AT,
            "status": "completed", "usage": usage.to_json(),
        });
        if let (Some(end_turn), Some(object)) = (end_turn, response.as_object_mut()) {
            object.insert("end_turn".to_owned(), Value::from(end_turn));
        }
        self.event(json!({ "type": "response.completed", "response": response }))
    }

    /// `response.failed` with an error `code` and `message`.
    pub fn failed(self, code: &str, message: &str) -> ResponseBuilder {
        let response = json!({
            "id": self.response_id, "object": "response", "created_at": CREATED_AT,
            "status": "failed", "error": { "code": code, "message": message },
        });
        self.event(json!({ "type": "response.failed", "response": response }))
    }

    /// The events built so far.
    pub fn into_events(self) -> Vec<SseEvent> {
        self.events
    }

    /// The events as an [`SseReply`] with default delivery settings.
    pub fn into_reply(self) -> SseReply {
        SseReply::new(self.events)
    }
}

/// `base` (an object) plus `type` and `extra`'s fields.
fn with_fields(base: &Value, event_type: &str, extra: Value) -> Value {
    let mut value = base.clone();
    if let Some(object) = value.as_object_mut() {
        object.insert("type".to_owned(), Value::from(event_type));
        if let Value::Object(extra) = extra {
            object.extend(extra);
        }
    }
    value
}

/// Splits `text` into at most `pieces` non-empty parts on char boundaries,
/// as evenly as possible. Empty text gives no parts.
pub fn split_text(text: &str, pieces: usize) -> Vec<&str> {
    let char_count = text.chars().count();
    let pieces = pieces.clamp(1, char_count.max(1));
    let mut boundaries: Vec<usize> = text.char_indices().map(|(offset, _)| offset).collect();
    boundaries.push(text.len());
    (0..pieces)
        .map(|piece| {
            let start = boundaries[piece * char_count / pieces];
            let end = boundaries[(piece + 1) * char_count / pieces];
            &text[start..end]
        })
        .filter(|part| !part.is_empty())
        .collect()
}

/// `response.created` for `response_id`.
pub fn response_created(response_id: &str) -> Vec<SseEvent> {
    ResponseBuilder::new(response_id).created().into_events()
}

/// `response.completed` for `response_id`.
pub fn response_completed(
    response_id: &str,
    usage: Usage,
    end_turn: Option<bool>,
) -> Vec<SseEvent> {
    ResponseBuilder::new(response_id)
        .completed(usage, end_turn)
        .into_events()
}

/// `response.failed` for `response_id`.
pub fn failed(response_id: &str, code: &str, message: &str) -> Vec<SseEvent> {
    ResponseBuilder::new(response_id)
        .failed(code, message)
        .into_events()
}

/// An assistant message streamed as `deltas` (output index 0).
pub fn text_message(item_id: &str, deltas: &[&str]) -> Vec<SseEvent> {
    ResponseBuilder::new("")
        .text_message(item_id, deltas)
        .into_events()
}

/// An assistant message with a `"phase"` (output index 0).
pub fn text_message_with_phase(item_id: &str, phase: &str, deltas: &[&str]) -> Vec<SseEvent> {
    ResponseBuilder::new("")
        .text_message_with_phase(item_id, phase, deltas)
        .into_events()
}

/// A reasoning item with summary parts (output index 0).
pub fn reasoning(item_id: &str, summaries: &[&[&str]]) -> Vec<SseEvent> {
    ResponseBuilder::new("")
        .reasoning(item_id, summaries)
        .into_events()
}

/// A function call item (output index 0).
pub fn function_call(item_id: &str, call_id: &str, name: &str, arguments: &str) -> Vec<SseEvent> {
    ResponseBuilder::new("")
        .function_call(item_id, call_id, name, arguments)
        .into_events()
}

/// created + a message of `text` split into `n_deltas` deltas + completed
/// with [`Usage::example`].
pub fn simple_text_response(
    response_id: &str,
    item_id: &str,
    text: &str,
    n_deltas: usize,
) -> SseReply {
    ResponseBuilder::new(response_id)
        .created()
        .text_message(item_id, &split_text(text, n_deltas))
        .completed(Usage::example(), None)
        .into_reply()
}

/// created + a message of `n` copies of `delta_text` + completed, for
/// benchmarks. Each delta is formatted directly, so 20,000 build quickly.
pub fn many_deltas(response_id: &str, item_id: &str, n: usize, delta_text: &str) -> SseReply {
    let mut builder = ResponseBuilder::new(response_id).created();
    let output_index = builder.take_output_index();
    let item = json!({ "id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": [] });
    builder = builder.event(
        json!({ "type": "response.output_item.added", "output_index": output_index, "item": item }),
    );
    builder.events.reserve(n + 2);
    let item_id_json = Value::from(item_id).to_string();
    let delta_json = Value::from(delta_text).to_string();
    for _ in 0..n {
        builder.push_text_delta(&item_id_json, output_index, &delta_json);
    }
    let done_item = json!({
        "id": item_id, "type": "message", "role": "assistant", "status": "completed",
        "content": [{ "type": "output_text", "text": delta_text.repeat(n), "annotations": [] }],
    });
    builder = builder.event(json!({ "type": "response.output_item.done", "output_index": output_index, "item": done_item }));
    builder.completed(Usage::example(), None).into_reply()
}

/// created + a message of `n` deltas, each `"<send time in Unix µs> "`,
/// paced `pace` apart, + completed: the latency probe. The time is written
/// into the delta text itself (via [`SENT_AT_US_PLACEHOLDER`]) because that
/// is the part of the event a daemon forwards to its client.
pub fn stamped_deltas(response_id: &str, item_id: &str, n: usize, pace: Duration) -> SseReply {
    let delta_text = format!("{SENT_AT_US_PLACEHOLDER} ");
    many_deltas(response_id, item_id, n, &delta_text)
        .with_pace(pace)
        .with_send_time_stamps()
}

/// Rewrites `sequence_number` in every JSON-object event to its position in
/// `events`, for transcripts glued together from the free functions. Events
/// whose data is not a JSON object are left alone but still counted.
pub fn renumber(events: Vec<SseEvent>) -> Vec<SseEvent> {
    events
        .into_iter()
        .enumerate()
        .map(
            |(position, event)| match serde_json::from_str::<Value>(&event.data) {
                Ok(Value::Object(mut object)) => {
                    object.insert("sequence_number".to_owned(), Value::from(position));
                    SseEvent {
                        event: event.event,
                        data: Value::Object(object).to_string(),
                    }
                }
                _ => event,
            },
        )
        .collect()
}

/// A 429 with `Retry-After` and an OpenAI-style error body.
pub fn rate_limited(retry_after_seconds: u64) -> Reply {
    let body = json!({ "error": {
        "message": "Rate limit reached (mock provider).", "type": "requests", "code": "rate_limit_exceeded",
    }});
    Reply::Status {
        status: 429,
        headers: vec![("retry-after".to_owned(), retry_after_seconds.to_string())],
        body: body.to_string(),
    }
}

/// A JSON error reply with an OpenAI-style body, e.g. 500 or 401.
pub fn error_status(status: u16, code: &str, message: &str) -> Reply {
    let body = json!({ "error": { "message": message, "type": "server_error", "code": code } });
    Reply::Status {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}
