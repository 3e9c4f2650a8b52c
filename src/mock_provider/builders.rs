//! The one vocabulary for scripting a provider's streamed response.
//!
//! This module owns the JSON shapes of the Responses streaming events the
//! mock sends. It knows nothing about HTTP.
//!
//! [`ResponseBuilder`] chains the parts of one response — realistic items
//! (messages, reasoning, function and custom tool calls), single events for
//! hand-made edge cases (an item without an id, a delta naming another item,
//! a `done` whose text differs from its deltas) and, for deliberately broken
//! input, raw events it does not touch. Every event it builds gets the next
//! `sequence_number`, and every item the next `output_index`, as the real API
//! numbers them. The free functions at the end are whole replies built with
//! it (a simple text turn, benchmark streams, error statuses).

use serde_json::{json, Value};

use std::collections::HashMap;
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
    /// A small usage: 10 input, 5 output, 15 total, nothing cached.
    pub fn small() -> Usage {
        Usage {
            input: 10,
            output: 5,
            total: 15,
            ..Usage::default()
        }
    }

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
    /// Output index of each item opened by [`ResponseBuilder::output_item_added`],
    /// by item id, so its `done` carries the same index.
    open_items: HashMap<String, u64>,
}

impl ResponseBuilder {
    /// An empty stream for the response `response_id`.
    pub fn new(response_id: impl Into<String>) -> ResponseBuilder {
        ResponseBuilder {
            response_id: response_id.into(),
            events: Vec::new(),
            next_sequence: 0,
            next_output_index: 0,
            open_items: HashMap::new(),
        }
    }

    /// Appends an event given as JSON (any type, any fields — missing or odd
    /// ones included); `sequence_number` is filled in.
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

    /// Appends `event` exactly as given, unnumbered: the escape hatch for
    /// deliberately malformed input (data that is not JSON, `[DONE]`, a
    /// missing `event:` line).
    pub fn raw(mut self, event: SseEvent) -> ResponseBuilder {
        self.events.push(event);
        self
    }

    /// Applies `part`, a group of events a test builds with its own helper
    /// (e.g. one tool call several of its responses share), in place.
    pub fn with(self, part: impl FnOnce(ResponseBuilder) -> ResponseBuilder) -> ResponseBuilder {
        part(self)
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

    /// A `function_call` item whose JSON `arguments` arrive in one delta.
    pub fn function_call_json(
        self,
        item_id: &str,
        call_id: &str,
        name: &str,
        arguments: Value,
    ) -> ResponseBuilder {
        let arguments = arguments.to_string();
        let item = |arguments: &str| {
            json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
                "arguments": arguments})
        };
        self.output_item_added(item(""))
            .event(json!({"type": "response.function_call_arguments.delta",
                "item_id": item_id, "delta": arguments}))
            .output_item_done(item(&arguments))
    }

    /// An `exec_command` function call with JSON `arguments` in one delta.
    pub fn exec_call(self, item_id: &str, call_id: &str, arguments: Value) -> ResponseBuilder {
        self.function_call_json(item_id, call_id, "exec_command", arguments)
    }

    /// A `custom_tool_call` (freeform tool, e.g. `apply_patch`) whose input
    /// streams as `deltas`.
    pub fn custom_tool_call(
        self,
        item_id: &str,
        call_id: &str,
        name: &str,
        deltas: &[&str],
    ) -> ResponseBuilder {
        let item = |input: &str| {
            json!({"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": name,
                "input": input})
        };
        let mut builder = self.output_item_added(item(""));
        for delta in deltas {
            builder = builder.event(json!({"type": "response.custom_tool_call_input.delta",
                "item_id": item_id, "call_id": call_id, "delta": delta}));
        }
        builder.output_item_done(item(&deltas.concat()))
    }

    /// `response.output_item.added` for any `item`; it takes the next output
    /// index, which its [`ResponseBuilder::output_item_done`] reuses when the
    /// item has an id.
    pub fn output_item_added(mut self, item: Value) -> ResponseBuilder {
        let output_index = self.take_output_index();
        if let Some(id) = item.get("id").and_then(Value::as_str) {
            self.open_items.insert(id.to_owned(), output_index);
        }
        self.event(
            json!({"type": "response.output_item.added", "output_index": output_index,
            "item": item}),
        )
    }

    /// `response.output_item.done` for any `item`: the output index of the
    /// added item with the same id, else the next one.
    pub fn output_item_done(mut self, item: Value) -> ResponseBuilder {
        let opened = item
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| self.open_items.remove(id));
        let output_index = match opened {
            Some(index) => index,
            None => self.take_output_index(),
        };
        self.event(
            json!({"type": "response.output_item.done", "output_index": output_index,
            "item": item}),
        )
    }

    /// An assistant message added with `seed` as its initial text; `id` only
    /// when given.
    pub fn message_added(self, id: Option<&str>, seed: &str) -> ResponseBuilder {
        let content = if seed.is_empty() {
            json!([])
        } else {
            json!([{"type": "output_text", "text": seed}])
        };
        let mut item = json!({"type": "message", "role": "assistant", "content": content});
        if let Some(id) = id {
            item["id"] = json!(id);
        }
        self.output_item_added(item)
    }

    /// An assistant message done with `text`; `id` only when given.
    pub fn message_done(self, id: Option<&str>, text: &str) -> ResponseBuilder {
        let mut item = json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]});
        if let Some(id) = id {
            item["id"] = json!(id);
        }
        self.output_item_done(item)
    }

    /// A lone `response.output_text.delta` naming `item_id` (empty: names no
    /// item).
    pub fn text_delta(self, item_id: &str, delta: &str) -> ResponseBuilder {
        self.event(
            json!({"type": "response.output_text.delta", "item_id": item_id,
            "delta": delta}),
        )
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

    /// `response.failed` that also reports the `usage` the failed response consumed.
    pub fn failed_with_usage(self, code: &str, message: &str, usage: Usage) -> ResponseBuilder {
        let response = json!({
            "id": self.response_id, "object": "response", "created_at": CREATED_AT,
            "status": "failed", "error": { "code": code, "message": message },
            "usage": usage.to_json(),
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

    /// The events as a [`Reply`] with default delivery settings.
    pub fn build(self) -> Reply {
        Reply::Sse(self.into_reply())
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

/// An OpenAI-style model list (`GET …/models`) naming `ids`, in order.
pub fn model_list(ids: &[&str]) -> Reply {
    let data: Vec<_> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "owned_by": "mock"}))
        .collect();
    Reply::status(200, json!({"object": "list", "data": data}).to_string())
}
