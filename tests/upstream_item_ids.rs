//! Ids openturn makes up never go upstream: an item the provider sent without an id gets one for
//! the client (events, turn items), but history — and so every later request's `input`, and the
//! rollout it is rebuilt from — carries only the ids the provider issued. Provider ids are sent
//! back for messages, reasoning and function calls, as the reference does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// Reasoning, a message and an `exec_command` call, each with `id` only when `id` is given.
fn items(
    response: ResponseBuilder,
    id: impl Fn(&str) -> Option<String>,
    call_id: &str,
    text: &str,
) -> ResponseBuilder {
    let with_id = |mut item: Value, prefix: &str| {
        if let Some(id) = id(prefix) {
            item["id"] = json!(id);
        }
        item
    };
    let reasoning = with_id(json!({"type": "reasoning", "summary": []}), "rs");
    let mut reasoning_done = reasoning.clone();
    reasoning_done["summary"] = json!([{"type": "summary_text", "text": "thinking"}]);
    reasoning_done["encrypted_content"] = json!(format!("enc-{call_id}"));
    let message = with_id(
        json!({"type": "message", "role": "assistant", "content": []}),
        "msg",
    );
    let mut message_done = message.clone();
    message_done["content"] = json!([{"type": "output_text", "text": text}]);
    let arguments = json!({"cmd": "echo hi"}).to_string();
    let call = with_id(
        json!({"type": "function_call", "call_id": call_id, "name": "exec_command",
            "arguments": arguments}),
        "fc",
    );
    response
        .output_item_added(reasoning)
        .output_item_done(reasoning_done)
        .output_item_added(message)
        .output_item_done(message_done)
        .output_item_added(call.clone())
        .output_item_done(call)
}

/// `(type, id)` of every item of a request's `input`.
fn input_ids(body: &Value) -> Vec<(String, Option<String>)> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            (
                item["type"].as_str().unwrap_or_default().to_string(),
                item.get("id").and_then(Value::as_str).map(str::to_string),
            )
        })
        .collect()
}

fn typed(kind: &str, id: Option<&str>) -> (String, Option<String>) {
    (kind.to_string(), id.map(str::to_string))
}

#[tokio::test]
async fn ids_openturn_assigned_stay_out_of_later_requests_and_provider_ids_are_kept() {
    let without_ids = ResponseBuilder::new("r1")
        .created()
        .with(|b| items(b, |_| None, "call_1", "Running"))
        .completed(Usage::small(), None)
        .build();
    let with_ids = ResponseBuilder::new("r2")
        .created()
        .with(|b| items(b, |prefix| Some(format!("{prefix}_p")), "call_2", "Again"))
        .completed(Usage::small(), None)
        .build();
    let last = message_reply("r3", "msg_3", &["Done."]);
    let cwd = tempfile::tempdir().unwrap();
    let mut s = session(
        Script::new([without_ids, with_ids, last]),
        &[],
        json!({"approvalPolicy": "never", "cwd": cwd.path().display().to_string()}),
    )
    .await;
    let turn = s.run_turn("go").await;
    single_turn_end(&turn, "completed");

    // The client still gets an id for every item, the provider-less ones included.
    let message_ids: Vec<&str> = items_of(&turn, "item/completed", "agentMessage")
        .iter()
        .filter_map(|item| item["id"].as_str())
        .collect();
    assert_eq!(message_ids.len(), 3, "{turn:#?}");
    assert!(!message_ids[0].is_empty());
    assert_eq!(&message_ids[1..], ["msg_p", "msg_3"]);
    let reasoning_ids: Vec<&str> = items_of(&turn, "item/completed", "reasoning")
        .iter()
        .filter_map(|item| item["id"].as_str())
        .collect();
    assert_eq!(reasoning_ids.len(), 2);
    assert!(!reasoning_ids[0].is_empty());
    assert_eq!(reasoning_ids[1], "rs_p");

    let bodies = s.bodies(3).await;
    assert_eq!(
        input_ids(&bodies[2]),
        vec![
            // The environment context, then the user's input.
            typed("message", None),
            typed("message", None),
            typed("reasoning", None),
            typed("message", None),
            typed("function_call", None),
            typed("function_call_output", None),
            typed("reasoning", Some("rs_p")),
            typed("message", Some("msg_p")),
            typed("function_call", Some("fc_p")),
            typed("function_call_output", None),
        ]
    );
    // The assigned ids are nowhere upstream, and nowhere in the stored history either.
    let assigned = [message_ids[0], reasoning_ids[0]];
    for body in &bodies {
        let text = body.to_string();
        assert!(assigned.iter().all(|id| !text.contains(id)), "{text}");
    }
    let history = rollout_response_items(&s.rollout());
    assert!(history.iter().all(|item| {
        let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
        !assigned.contains(&id)
    }));
}
