//! The demo provider's choices, request by request: which plan the user's words pick, the
//! tool call each step sends in the form the request offers, and the closing summary read from
//! the tool outputs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

use serde_json::{json, Value};

use super::*;

fn request(input: Value, apply_patch_type: &str) -> RecordedRequest {
    let body = json!({
        "model": "gpt-5",
        "input": input,
        "tools": [
            {"type": "function", "name": "exec_command"},
            {"type": apply_patch_type, "name": "apply_patch"},
        ],
    });
    RecordedRequest {
        method: "POST".into(),
        path: "/v1/responses".into(),
        query: None,
        headers: Vec::new(),
        raw_body: body.to_string().into(),
        body,
    }
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// The JSON data of every event of an SSE reply.
fn events(reply: &Reply) -> Vec<Value> {
    let Reply::Sse(sse) = reply else {
        panic!("not an SSE reply: {reply:?}")
    };
    sse.events
        .iter()
        .map(|event| serde_json::from_str(&event.data).unwrap())
        .collect()
}

/// The items of the reply's `output_item.done` events.
fn items(reply: &Reply) -> Vec<Value> {
    events(reply)
        .into_iter()
        .filter(|event| event["type"] == "response.output_item.done")
        .map(|event| event["item"].clone())
        .collect()
}

fn message_text(items: &[Value]) -> String {
    let message = items.iter().find(|item| item["type"] == "message").unwrap();
    message["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn the_users_words_choose_the_steps() {
    assert_eq!(plan("hello"), vec![]);
    assert_eq!(plan("Please RUN a command"), vec![Step::Command]);
    assert_eq!(plan("edit a file"), vec![Step::Edit]);
    assert_eq!(
        plan("run a command and edit a file"),
        vec![Step::Command, Step::Edit]
    );
    assert_eq!(plan("give me the tour"), vec![Step::Command, Step::Edit]);
}

#[test]
fn a_greeting_reasons_then_says_what_to_ask_for() {
    let context = user("<environment_context>\n  <cwd>/tmp</cwd>\n</environment_context>");
    let reply = answer(&request(json!([context, user("hello")]), "custom"));
    let items = items(&reply);
    assert_eq!(items[0]["type"], "reasoning");
    assert!(items[0]["summary"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("**Reading the request**"));
    let text = message_text(&items);
    assert!(
        text.contains("run a command") && text.contains("edit a file"),
        "{text}"
    );
    assert_eq!(events(&reply).last().unwrap()["type"], "response.completed");
}

#[test]
fn a_command_is_asked_for_outside_the_sandbox_then_its_output_is_reported() {
    let first = answer(&request(json!([user("run a command")]), "custom"));
    let items = items(&first);
    let call = items
        .iter()
        .find(|item| item["type"] == "function_call")
        .unwrap();
    assert_eq!(call["name"], "exec_command");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["cmd"], DEMO_COMMAND);
    assert_eq!(arguments["sandbox_permissions"], "require_escalated");
    let output =
        "Exit code: 0\nWall time: 0.01 seconds\nOutput:\nhello from the openturn demo\n/tmp\n";
    let follow_up = json!([
        user("run a command"),
        call,
        {"type": "function_call_output", "call_id": call["call_id"], "output": output},
    ]);
    let last = items_of_follow_up(follow_up);
    assert!(last.iter().all(|item| item["type"] != "reasoning"));
    let text = message_text(&last);
    assert!(
        text.contains("the command ran and printed: hello from the openturn demo"),
        "{text}"
    );
}

fn items_of_follow_up(input: Value) -> Vec<Value> {
    items(&answer(&request(input, "custom")))
}

#[test]
fn a_declined_command_is_reported_as_not_run() {
    let call_id = format!("{COMMAND_CALL}abc");
    let text = message_text(&items_of_follow_up(json!([
        user("run a command"),
        {"type": "function_call", "call_id": call_id, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id,
         "output": "The user declined to run this command; it did not run."},
    ])));
    assert!(
        text.contains("the command did not run: The user declined"),
        "{text}"
    );
}

#[test]
fn an_edit_uses_the_form_of_apply_patch_the_request_offers() {
    let freeform = items(&answer(&request(json!([user("edit a file")]), "custom")));
    let call = freeform
        .iter()
        .find(|item| item["type"] == "custom_tool_call")
        .unwrap();
    assert_eq!(call["name"], "apply_patch");
    let patch = call["input"].as_str().unwrap();
    assert!(patch.starts_with("*** Begin Patch\n*** Add File: openturn-demo.txt\n"));
    let function = items(&answer(&request(json!([user("edit a file")]), "function")));
    let call = function
        .iter()
        .find(|item| item["type"] == "function_call")
        .unwrap();
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["input"].as_str(), Some(patch));
}

#[test]
fn the_tour_runs_the_command_then_the_edit_then_sums_up() {
    let command_id = format!("{COMMAND_CALL}t1");
    let edit_id = format!("{EDIT_CALL}t2");
    let after_command = json!([
        user("the tour"),
        {"type": "function_call", "call_id": command_id, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": command_id,
         "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\n"},
    ]);
    let second = items_of_follow_up(after_command.clone());
    assert!(second.iter().any(|item| item["type"] == "custom_tool_call"));
    let mut after_edit = after_command.as_array().unwrap().clone();
    after_edit.push(
        json!({"type": "custom_tool_call", "call_id": edit_id, "name": "apply_patch", "input": ""}),
    );
    after_edit.push(
        json!({"type": "custom_tool_call_output", "call_id": edit_id,
        "output": "Success. Updated the following files:\nA openturn-demo.txt\n"}),
    );
    let text = message_text(&items_of_follow_up(Value::Array(after_edit)));
    assert!(
        text.contains("the command ran and printed nothing"),
        "{text}"
    );
    assert!(text.contains("the patch was applied"), "{text}");
}

#[test]
fn an_earlier_turns_calls_do_not_count_for_the_new_prompt() {
    let call_id = format!("{COMMAND_CALL}old");
    let first = items_of_follow_up(json!([
        user("run a command"),
        {"type": "function_call", "call_id": call_id, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": "Exit code: 0\nOutput:\nx\n"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
        user("run it again"),
    ]));
    assert!(first.iter().any(|item| item["type"] == "function_call"));
}
