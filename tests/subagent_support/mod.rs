//! A scripted model for the sub-agent tests (`tests/subagents.rs`, the ACP bridge's): it
//! answers each request from its last input item, so a parent's and a child's requests, which
//! reach the mock provider in any order, each get the reply their own state calls for.
//!
//! - a user message `CALL <tool> <json>` → a call of that sub-agent tool with those arguments;
//! - a user message with [`CHILD_TASK`] (a child's task) → the message [`CHILD_ANSWER`];
//! - a user message with `DELEGATE` → `spawn_agent` (namespace `multi_agent_v1`) with
//!   [`CHILD_TASK`];
//! - the output of the spawn → `wait_agent` on the agent it names;
//! - any other tool output, or any other message → the message `ok`.

#![allow(dead_code)]

use openturn::mock_provider::{RecordedRequest, Reply, Responder, ResponseBuilder, Script, Usage};
use serde_json::{json, Value};

pub const CHILD_TASK: &str = "CHILD TASK: name the answer";
pub const CHILD_ANSWER: &str = "the answer is 42";
pub const NAMESPACE: &str = "multi_agent_v1";

/// A reply of one call of `tool` in the namespace.
pub fn agent_call(call_id: &str, tool: &str, arguments: &Value) -> Reply {
    namespaced_call(NAMESPACE, call_id, tool, arguments)
}

/// A reply of one call of `tool` in `namespace` (an MCP server's `mcp__<name>`, or the
/// sub-agent tools').
pub fn namespaced_call(namespace: &str, call_id: &str, tool: &str, arguments: &Value) -> Reply {
    let arguments = arguments.to_string();
    let item = |arguments: &str| {
        json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
               "name": tool, "namespace": namespace, "arguments": arguments})
    };
    ResponseBuilder::new(format!("resp_{call_id}"))
        .created()
        .output_item_added(item(""))
        .output_item_done(item(&arguments))
        .completed(Usage::small(), None)
        .build()
}

pub fn message(text: &str) -> Reply {
    ResponseBuilder::new("resp_msg")
        .created()
        .text_message("msg_1", &[text])
        .completed(Usage::small(), None)
        .build()
}

/// The text of a message item.
pub fn item_text(item: &Value) -> String {
    item["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect()
}

/// The last item of a request's input.
pub fn last_input(request: &RecordedRequest) -> Value {
    request.body["input"]
        .as_array()
        .and_then(|input| input.last().cloned())
        .unwrap_or_default()
}

/// See the module docs.
pub fn model_reply(request: &RecordedRequest) -> Reply {
    let last = last_input(request);
    if last["type"] == "function_call_output" {
        let call_id = last["call_id"].as_str().unwrap_or_default();
        let output = last["output"].as_str().unwrap_or_default();
        if call_id == "call_spawn" {
            let spawned: Value = serde_json::from_str(output).unwrap_or_default();
            let targets = json!({"targets": [spawned["agent_id"]], "timeout_ms": 600000});
            return agent_call("call_wait", "wait_agent", &targets);
        }
        return message("ok");
    }
    let text = item_text(&last);
    if let Some(rest) = text.strip_prefix("CALL ") {
        let (tool, arguments) = rest.split_once(' ').unwrap_or((rest, "{}"));
        let arguments: Value = serde_json::from_str(arguments).unwrap_or_default();
        return agent_call(&format!("call_{tool}"), tool, &arguments);
    }
    if text.contains(CHILD_TASK) {
        return message(CHILD_ANSWER);
    }
    if text.contains("DELEGATE") {
        return agent_call("call_spawn", "spawn_agent", &json!({"message": CHILD_TASK}));
    }
    message("ok")
}

pub fn script() -> Script {
    Script::answering(Responder::new(model_reply))
}

/// The request whose last input item is a message starting with `text`.
pub fn request_ending_with<'a>(requests: &'a [RecordedRequest], text: &str) -> &'a RecordedRequest {
    requests
        .iter()
        .find(|request| item_text(&last_input(request)).starts_with(text))
        .unwrap_or_else(|| panic!("no request ends with {text:?}"))
}

/// The output the model got for `call_id`, parsed.
pub fn output_of(requests: &[RecordedRequest], call_id: &str) -> Value {
    let output = requests
        .iter()
        .filter_map(|request| {
            let last = last_input(request);
            (last["type"] == "function_call_output" && last["call_id"] == call_id)
                .then(|| last["output"].as_str().unwrap_or_default().to_string())
        })
        .next_back()
        .unwrap_or_else(|| panic!("no output for {call_id}"));
    serde_json::from_str(&output).unwrap_or(Value::String(output))
}
