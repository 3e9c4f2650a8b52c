//! Single Responses stream events for hand-made transcripts: the vocabulary tests script
//! provider streams with when they need events the realistic sequences of `builders.rs` do not
//! produce — items without ids, deltas naming another item, a message whose done text differs
//! from its deltas. Events carry only the fields openturn reads (no `sequence_number` or
//! `output_index`); [`super::renumber`] adds sequence numbers when a test needs them.
//!
//! Each function builds one event (or one item's added/delta/done group), so a transcript
//! reads as the list of what the provider sends.

use serde_json::{json, Value};

use super::script::{Reply, SseEvent, SseReply};

/// An event from its JSON (its `type` becomes the `event:` line).
pub fn ev(value: Value) -> SseEvent {
    SseEvent::json(&value)
}

/// `response.created` for response `id`.
pub fn created(id: &str) -> SseEvent {
    ev(json!({"type": "response.created", "response": {"id": id}}))
}

/// `response.completed` with a small usage and, when given, `end_turn`.
pub fn completed(id: &str, end_turn: Option<bool>) -> SseEvent {
    let mut response =
        json!({"id": id, "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}});
    if let Some(end_turn) = end_turn {
        response["end_turn"] = json!(end_turn);
    }
    ev(json!({"type": "response.completed", "response": response}))
}

/// `response.output_item.added` for any item.
pub fn output_item_added(item: Value) -> SseEvent {
    ev(json!({"type": "response.output_item.added", "item": item}))
}

/// `response.output_item.done` for any item.
pub fn output_item_done(item: Value) -> SseEvent {
    ev(json!({"type": "response.output_item.done", "item": item}))
}

/// An assistant message added with `seed` as its initial text; `id` only when given.
pub fn message_added(id: Option<&str>, seed: &str) -> SseEvent {
    let content = if seed.is_empty() {
        json!([])
    } else {
        json!([{"type": "output_text", "text": seed}])
    };
    let mut item = json!({"type": "message", "role": "assistant", "content": content});
    if let Some(id) = id {
        item["id"] = json!(id);
    }
    output_item_added(item)
}

/// An assistant message done with `text`; `id` only when given.
pub fn message_done(id: Option<&str>, text: &str) -> SseEvent {
    let mut item = json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text}]});
    if let Some(id) = id {
        item["id"] = json!(id);
    }
    output_item_done(item)
}

/// `response.output_text.delta` naming `item_id` (empty: names no item).
pub fn text_delta(item_id: &str, delta: &str) -> SseEvent {
    ev(json!({"type": "response.output_text.delta", "item_id": item_id, "delta": delta}))
}

/// A whole assistant message: added, one delta per piece, done.
pub fn message(id: &str, pieces: &[&str]) -> Vec<SseEvent> {
    let mut events = vec![message_added(Some(id), "")];
    events.extend(pieces.iter().map(|piece| text_delta(id, piece)));
    events.push(message_done(Some(id), &pieces.concat()));
    events
}

/// An `exec_command` call as added, arguments delta, done.
pub fn exec_call(item_id: &str, call_id: &str, arguments: Value) -> Vec<SseEvent> {
    function_call(item_id, call_id, "exec_command", arguments)
}

/// A function call as added, one arguments delta, done.
pub fn function_call(item_id: &str, call_id: &str, name: &str, arguments: Value) -> Vec<SseEvent> {
    let arguments = arguments.to_string();
    vec![
        output_item_added(json!({"type": "function_call",
            "id": item_id, "call_id": call_id, "name": name, "arguments": ""})),
        ev(
            json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "delta": arguments}),
        ),
        output_item_done(json!({"type": "function_call",
            "id": item_id, "call_id": call_id, "name": name, "arguments": arguments})),
    ]
}

/// A response: created, the given groups of events, completed.
pub fn response(id: &str, events: Vec<Vec<SseEvent>>, end_turn: Option<bool>) -> Reply {
    let mut all = vec![created(id)];
    all.extend(events.into_iter().flatten());
    all.push(completed(id, end_turn));
    Reply::Sse(SseReply::new(all))
}
