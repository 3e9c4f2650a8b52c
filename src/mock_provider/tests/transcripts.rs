//! Transcript loading (the shipped files and the format's rules) and the
//! event builders.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use super::super::{
    many_deltas, simple_text_response, split_text, Chunking, Fault, Reply, ResponseBuilder, Script,
    ScriptError, SseEvent, SseReply, Usage,
};

fn transcripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("transcripts")
}

fn sse(reply: &Reply) -> &SseReply {
    match reply {
        Reply::Sse(sse) => sse,
        Reply::Status { .. } => panic!("expected an SSE reply, got {reply:?}"),
    }
}

/// Each event's data as JSON.
fn data(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|event| serde_json::from_str(&event.data).unwrap())
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect()
}

/// Checks what every well-formed streamed response has: the `event:` name
/// equals `type`, sequence numbers count from 0, created first, completed last.
fn assert_well_formed(reply: &SseReply) {
    let events = data(&reply.events);
    for (index, (event, value)) in reply.events.iter().zip(&events).enumerate() {
        assert_eq!(event.event.as_deref(), value["type"].as_str());
        assert_eq!(value["sequence_number"], json!(index), "{value}");
    }
    assert_eq!(types(&events).first(), Some(&"response.created"));
    assert_eq!(types(&events).last(), Some(&"response.completed"));
}

fn delta_text(events: &[Value], event_type: &str) -> String {
    events
        .iter()
        .filter(|e| e["type"] == event_type)
        .map(|e| e["delta"].as_str().unwrap())
        .collect()
}

#[test]
fn every_shipped_transcript_loads() {
    let mut loaded = 0;
    for entry in std::fs::read_dir(transcripts_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "json") {
            let script = Script::from_file(&path)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            assert!(!script.replies.is_empty(), "{}", path.display());
            script
                .replies
                .iter()
                .for_each(|reply| assert_well_formed(sse(reply)));
            loaded += 1;
        }
    }
    assert!(loaded >= 3);
}

#[test]
fn demo_hello_streams_ten_deltas_that_add_up() {
    let script = Script::from_file(transcripts_dir().join("demo_hello.json")).unwrap();
    let reply = sse(&script.replies[0]);
    assert_eq!(reply.pace, Some(Duration::from_millis(30)));
    assert!(reply
        .headers
        .contains(&("openai-model".to_owned(), "gpt-5-mini".to_owned())));
    let events = data(&reply.events);
    assert_eq!(
        types(&events)
            .iter()
            .filter(|t| **t == "response.output_text.delta")
            .count(),
        10
    );
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(
        done["item"]["content"][0]["text"],
        json!(delta_text(&events, "response.output_text.delta"))
    );
}

#[test]
fn demo_reasoning_has_summary_parts_then_a_message() {
    let script = Script::from_file(transcripts_dir().join("demo_reasoning.json")).unwrap();
    let events = data(&sse(&script.replies[0]).events);
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .collect();
    assert_eq!(done[0]["item"]["type"], "reasoning");
    assert_eq!(done[0]["item"]["summary"].as_array().unwrap().len(), 2);
    assert_eq!(done[1]["item"]["type"], "message");
}

#[test]
fn demo_tool_calls_exec_command_then_answers() {
    let script = Script::from_file(transcripts_dir().join("demo_tool.json")).unwrap();
    assert_eq!(script.replies.len(), 2);
    let first = data(&sse(&script.replies[0]).events);
    let call = &first
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap()["item"];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["name"], "exec_command");
    let arguments = call["arguments"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"cmd": "echo hello from a tool", "login": false})
    );
    assert_eq!(
        delta_text(&first, "response.function_call_arguments.delta"),
        arguments
    );
    let second = data(&sse(&script.replies[1]).events);
    assert!(types(&second).contains(&"response.output_text.delta"));
}

#[test]
fn transcript_format_options() {
    let script = Script::from_json_str(
        r#"{"replies": [
            {"events": [{"type": "a"}, {"type": "b", "sequence_number": 9}, "[DONE]"],
             "chunking": {"fixed_bytes": 3}, "fault": {"after_bytes": 4, "kind": "stall"},
             "hold_open_after_end": true, "stamp_send_time": true},
            {"events": [], "chunking": "whole"},
            {"status": 429, "headers": {"retry-after": "2"}, "body": "slow"}
        ], "when_exhausted": {"status": 500}}"#,
    )
    .unwrap();
    let first = sse(&script.replies[0]);
    let expected_events = vec![
        SseEvent {
            event: Some("a".into()),
            data: json!({"type": "a", "sequence_number": 0}).to_string(),
        },
        SseEvent {
            event: Some("b".into()),
            data: json!({"type": "b", "sequence_number": 9}).to_string(),
        },
        SseEvent::raw("[DONE]"),
    ];
    let expected = SseReply {
        headers: vec![],
        events: expected_events,
        chunking: Chunking::FixedBytes(3),
        pace: None,
        fault: Some((4, Fault::Stall)),
        hold_open_after_end: true,
        stamp_send_time: true,
        count_request_usage: false,
    };
    assert_eq!(first, &expected);
    assert_eq!(sse(&script.replies[1]).chunking, Chunking::Whole);
    let status = Reply::Status {
        status: 429,
        headers: vec![("retry-after".into(), "2".into())],
        body: "slow".into(),
    };
    assert_eq!(script.replies[2], status);
    assert_eq!(script.when_exhausted, Some(Reply::status(500, "")));
}

#[test]
fn transcript_errors_name_the_reply() {
    let cases = [
        (
            r#"{"replies": [{"body": "x"}]}"#,
            "replies[0]: a reply needs",
        ),
        (
            r#"{"replies": [{"events": [{"delta": 1}]}]}"#,
            "replies[0].events[0]: event object has no",
        ),
        (
            r#"{"replies": [{"events": [], "pace": 5}]}"#,
            "replies[0]: unknown field `pace`",
        ),
        (
            r#"{"replies": [], "when_exhausted": {"events": [7]}}"#,
            "when_exhausted.events[0]: an event is",
        ),
        (r#"{"reply": []}"#, "transcript is not"),
    ];
    for (text, expected) in cases {
        let error = Script::from_json_str(text).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{text}: {error}");
    }
    let missing = Script::from_file("/nonexistent/transcript.json").unwrap_err();
    assert!(matches!(missing, ScriptError::Read { .. }));
}

#[test]
fn simple_text_response_shape() {
    let reply = simple_text_response("resp_1", "msg_1", "Hello world", 4);
    assert_well_formed(&reply);
    let events = data(&reply.events);
    assert_eq!(
        delta_text(&events, "response.output_text.delta"),
        "Hello world"
    );
    assert_eq!(
        events[1],
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
               "item": {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}})
    );
    assert_eq!(
        events[2],
        json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1",
               "output_index": 0, "content_index": 0, "delta": "He"})
    );
    assert_eq!(
        events.last().unwrap()["response"],
        json!({"id": "resp_1", "object": "response", "created_at": 1_700_000_000_u64, "status": "completed",
               "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 30,
                         "output_tokens_details": {"reasoning_tokens": 7}, "total_tokens": 130}})
    );
}

#[test]
fn builder_numbers_output_items_and_builds_every_kind() {
    let reply = ResponseBuilder::new("resp_2")
        .created()
        .reasoning("rs_1", &[&["Think", "ing"], &["More"]])
        .text_message_with_phase("msg_1", "commentary", &["Running it."])
        .function_call("fc_1", "call_1", "exec_command", r#"{"cmd":"ls"}"#)
        .completed(
            Usage {
                total: 1,
                ..Usage::default()
            },
            Some(true),
        )
        .into_reply();
    assert_well_formed(&reply);
    let events = data(&reply.events);
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .collect();
    assert_eq!(
        done[0],
        &json!({"type": "response.output_item.done", "sequence_number": 9, "output_index": 0, "item": {
            "id": "rs_1", "type": "reasoning", "encrypted_content": "enc_rs_1",
            "summary": [{"type": "summary_text", "text": "Thinking"}, {"type": "summary_text", "text": "More"}]}})
    );
    assert_eq!(done[1]["output_index"], 1);
    assert_eq!(done[1]["item"]["phase"], "commentary");
    assert_eq!(done[2]["output_index"], 2);
    assert_eq!(done[2]["item"]["arguments"], r#"{"cmd":"ls"}"#);
    assert_eq!(
        delta_text(&events, "response.function_call_arguments.delta"),
        r#"{"cmd":"ls"}"#
    );
    assert_eq!(
        delta_text(&events, "response.reasoning_summary_text.delta"),
        "ThinkingMore"
    );
    assert_eq!(events.last().unwrap()["response"]["end_turn"], true);
    let failed = data(
        &ResponseBuilder::new("resp_3")
            .failed("server_error", "boom")
            .into_events(),
    );
    assert_eq!(
        failed[0]["response"]["error"],
        json!({"code": "server_error", "message": "boom"})
    );
}

#[test]
fn every_part_is_numbered_continuously_and_raw_events_are_left_alone() {
    let events = ResponseBuilder::new("r")
        .created()
        .reasoning("rs", &[&["a"]])
        .text_message("m", &["x", "y"])
        .exec_call("fc", "c1", json!({"cmd": "ls"}))
        .custom_tool_call("ctc", "c2", "apply_patch", &["*** Begin", " Patch"])
        .message_added(None, "seed")
        .text_delta("elsewhere", "orphan")
        .message_done(None, "other text")
        .output_item_added(json!({"type": "web_search_call", "id": "ws"}))
        .output_item_done(json!({"type": "web_search_call", "id": "ws", "status": "completed"}))
        .event(json!({"type": "response.output_text.delta", "delta": "no item id"}))
        .raw(SseEvent::raw("{not json"))
        .completed(Usage::small(), None)
        .into_events();
    let (raw, numbered): (Vec<_>, Vec<_>) =
        events.iter().partition(|event| event.data == "{not json");
    assert_eq!(raw.len(), 1, "the raw event is sent as given");
    assert_eq!(raw[0].event, None);
    let numbered: Vec<SseEvent> = numbered.into_iter().cloned().collect();
    let numbered = data(&numbered);
    let sequence: Vec<u64> = numbered
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (0..numbered.len() as u64).collect();
    assert_eq!(sequence, expected, "a raw event takes no sequence number");
    let indexes = |kind: &str| -> Vec<u64> {
        numbered
            .iter()
            .filter(|e| e["type"] == kind)
            .map(|e| e["output_index"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(indexes("response.output_item.added"), [0, 1, 2, 3, 4, 6]);
    // The id-less message's done cannot be matched to its added item.
    assert_eq!(indexes("response.output_item.done"), [0, 1, 2, 3, 5, 6]);
    let custom = numbered
        .iter()
        .find(|e| e["type"] == "response.output_item.done" && e["item"]["id"] == "ctc")
        .unwrap();
    assert_eq!(custom["item"]["input"], "*** Begin Patch");
    let call = numbered
        .iter()
        .find(|e| e["type"] == "response.output_item.done" && e["item"]["id"] == "fc")
        .unwrap();
    assert_eq!(call["item"]["arguments"], r#"{"cmd":"ls"}"#);
    assert_eq!(
        numbered.last().unwrap()["response"]["usage"]["total_tokens"],
        15
    );
}

#[test]
fn many_deltas_builds_twenty_thousand_quickly() {
    let started = std::time::Instant::now();
    let reply = many_deltas("resp_b", "msg_b", 20_000, "tok \"q\" ");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(reply.events.len(), 20_004);
    assert_well_formed(&reply);
    let done = data(&reply.events[20_002..20_003]);
    assert_eq!(
        done[0]["item"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .len(),
        20_000 * 8
    );
}

#[test]
fn split_text_is_even_and_char_safe() {
    assert_eq!(split_text("abcdef", 3), ["ab", "cd", "ef"]);
    assert_eq!(split_text("héllo", 2), ["hé", "llo"]);
    assert_eq!(split_text("ab", 5), ["a", "b"]);
    assert_eq!(split_text("", 3), Vec::<&str>::new());
    assert_eq!(split_text("abc", 0), ["abc"]);
}
