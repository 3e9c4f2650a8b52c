//! Sub-agents whose turns are still running, through the real binary (docs/TOOLS.md): the bound
//! of 6 children running at once (a 7th spawn is refused until one is closed), and `send_input`
//! to a busy child, which with `interrupt: true` ends its turn and starts another, and without it
//! joins the running turn. A child holds its turn open on a stalled response (`HANG`) or on a
//! command that waits for a file the test creates (`GATE <path>`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod subagent_support;
mod support;
mod turn_support;

use std::cell::Cell;

use openturn::mock_provider::{
    Fault, RecordedRequest, Reply, Responder, ResponseBuilder, Script, Usage,
};
use serde_json::{json, Value};
use subagent_support::{agent_call, item_text, last_input, output_of};
use turn_support::*;

fn thread_params() -> Value {
    json!({"approvalPolicy": "never", "sandbox": "read-only", "model": "gpt-5",
        "cwd": std::env::temp_dir().display().to_string()})
}

fn message(text: &str) -> Reply {
    ResponseBuilder::new("resp_msg")
        .created()
        .text_message("msg_1", &[text])
        .completed(Usage::small(), None)
        .build()
}

/// `CALL <tool> <json>` calls a sub-agent tool; a message with `HANG` gets a response that
/// never ends; `GATE <path>` runs a command that ends once `path` exists; anything else `ok`.
fn model_reply(request: &RecordedRequest) -> Reply {
    let last = last_input(request);
    if last["type"] == "function_call_output" {
        return message("ok");
    }
    let text = item_text(&last);
    if let Some(rest) = text.strip_prefix("CALL ") {
        let (tool, arguments) = rest.split_once(' ').unwrap_or((rest, "{}"));
        let arguments: Value = serde_json::from_str(arguments).unwrap_or_default();
        return agent_call(&format!("call_{tool}"), tool, &arguments);
    }
    if text.contains("HANG") {
        return ResponseBuilder::new("resp_hang")
            .created()
            .into_reply()
            .with_fault(usize::MAX, Fault::Stall)
            .into();
    }
    if let Some(path) = text.split("GATE ").nth(1) {
        let cmd = format!(
            "while [ ! -e '{}' ]; do sleep 0.05; done; echo opened",
            path.trim()
        );
        return ResponseBuilder::new("resp_gate")
            .created()
            .exec_call(
                "fc_gate",
                "call_gate",
                json!({"cmd": cmd, "yield_time_ms": 30000}),
            )
            .completed(Usage::small(), None)
            .build();
    }
    message("ok")
}

fn script() -> Script {
    Script::answering(Responder::new(model_reply))
}

/// Runs a parent turn until it ended and `also` held for one message; returns every message.
async fn parent_turn_until(
    s: &mut Session,
    text: &str,
    also: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    s.start_turn(text, json!({})).await;
    let parent = s.thread_id.clone();
    let parent_done = Cell::new(false);
    let other = Cell::new(false);
    s.daemon
        .collect_until(|m| {
            if m["method"] == "turn/completed" && m["params"]["threadId"] == parent.as_str() {
                parent_done.set(true);
            }
            if also(m) {
                other.set(true);
            }
            parent_done.get() && other.get()
        })
        .await
}

fn call(tool: &str, arguments: Value) -> String {
    format!("CALL {tool} {arguments}")
}

/// Spawns a child on `task` and waits until its first turn started; its id and that turn's id.
async fn spawn_running(s: &mut Session, task: &str) -> (String, String) {
    spawn_until(s, task, "turn/started", "").await
}

/// Spawns a child on `task` and waits until the parent's turn ended and a `method` notification
/// with an item of `item_type` (any, if empty) came for another thread.
async fn spawn_until(
    s: &mut Session,
    task: &str,
    method: &str,
    item_type: &str,
) -> (String, String) {
    let parent = s.thread_id.clone();
    let messages = parent_turn_until(s, &call("spawn_agent", json!({"message": task})), |m| {
        m["method"] == method
            && m["params"]["threadId"] != parent.as_str()
            && (item_type.is_empty() || m["params"]["item"]["type"] == item_type)
    })
    .await;
    let spawned = output_of(&s.provider.requests(), "call_spawn_agent");
    let child = spawned["agent_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{spawned}"));
    let turn = params_of(&messages, "turn/started")
        .into_iter()
        .find(|p| p["threadId"] == child)
        .unwrap_or_else(|| panic!("{messages:#?}"))["turn"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    (child.to_string(), turn)
}

/// Whether `m` is the end of a turn of `thread` with `status`.
fn turn_ended(m: &Value, thread: &str, status: &str) -> bool {
    m["method"] == "turn/completed"
        && m["params"]["threadId"] == thread
        && m["params"]["turn"]["status"] == status
}

#[tokio::test]
async fn a_seventh_running_child_is_refused_until_one_is_closed() {
    let mut s = session(script(), &[], thread_params()).await;
    let mut children = Vec::new();
    for n in 0..6 {
        children.push(spawn_running(&mut s, &format!("HANG {n}")).await.0);
    }

    // The 7th is refused; the model reads why in its next request, and no thread started.
    let seventh = call("spawn_agent", json!({"message": "HANG 6"}));
    let messages = parent_turn_until(&mut s, &seventh, |_| true).await;
    assert!(params_of(&messages, "thread/started").is_empty());
    let refused = output_of(&s.provider.requests(), "call_spawn_agent");
    let refused = refused.as_str().unwrap_or_else(|| panic!("{refused}"));
    assert!(refused.contains("too many agents"), "{refused}");
    assert!(refused.contains("close_agent"), "{refused}");

    // Closing one frees a place: the next spawn starts a child.
    let closed = children[0].clone();
    parent_turn_until(
        &mut s,
        &call("close_agent", json!({"target": closed})),
        |_| true,
    )
    .await;
    assert_eq!(
        output_of(&s.provider.requests(), "call_close_agent"),
        json!({"previous_status": "running"})
    );
    let (seventh, _) = spawn_running(&mut s, "HANG 7").await;
    assert!(!children.contains(&seventh));
}

#[tokio::test]
async fn input_with_interrupt_ends_the_running_child_turn_and_starts_one_on_it() {
    let mut s = session(script(), &[], thread_params()).await;
    let (child, first_turn) = spawn_running(&mut s, "HANG first").await;

    let sent = json!({"target": child, "message": "after the interrupt", "interrupt": true});
    let second_ended = |m: &Value| turn_ended(m, &child, "completed");
    let messages = parent_turn_until(&mut s, &call("send_input", sent), second_ended).await;

    let ends: Vec<&Value> = params_of(&messages, "turn/completed")
        .into_iter()
        .filter(|p| p["threadId"] == child.as_str())
        .collect();
    assert_eq!(ends.len(), 2, "{messages:#?}");
    assert_eq!(ends[0]["turn"]["id"], first_turn.as_str());
    assert_eq!(ends[0]["turn"]["status"], "interrupted");
    let second_turn = ends[1]["turn"]["id"].as_str().unwrap();
    // The new turn's end names the parent turn that sent the input as its root, as its start does.
    let parent_turn = params_of(&messages, "turn/started")
        .into_iter()
        .find(|p| p["threadId"] == s.thread_id.as_str())
        .unwrap()["turn"]["id"]
        .clone();
    assert_eq!(ends[1]["turn"]["rootTurnId"], parent_turn);
    assert_ne!(second_turn, first_turn);
    let starts = params_of(&messages, "turn/started")
        .into_iter()
        .filter(|p| p["threadId"] == child.as_str())
        .count();
    assert_eq!(starts, 1, "one new turn for the input");

    let requests = s.provider.requests();
    assert_eq!(
        output_of(&requests, "call_send_input"),
        json!({"submission_id": second_turn})
    );
    let after = requests
        .iter()
        .find(|r| item_text(&last_input(r)) == "after the interrupt")
        .expect("the input reaches the child's model");
    assert!(user_texts(&after.body).iter().any(|t| t == "HANG first"));
}

#[tokio::test]
async fn input_without_interrupt_joins_the_running_child_turn() {
    let mut s = session(script(), &[], thread_params()).await;
    let gate = s.home.path().join("gate");
    let task = format!("GATE {}", gate.display());
    // Waits until the child's command runs, so its turn is surely busy when the input comes.
    let (child, turn) = spawn_until(&mut s, &task, "item/started", "commandExecution").await;

    let sent = json!({"target": child, "message": "joined input"});
    let messages = parent_turn_until(&mut s, &call("send_input", sent), |_| true).await;
    assert!(!messages
        .iter()
        .any(|m| m["method"] == "turn/started" && m["params"]["threadId"] == child.as_str()));
    assert_eq!(
        output_of(&s.provider.requests(), "call_send_input"),
        json!({"submission_id": turn})
    );

    std::fs::write(&gate, "").unwrap();
    let messages = s
        .daemon
        .collect_until(|m| {
            m["method"] == "turn/completed" && m["params"]["threadId"] == child.as_str()
        })
        .await;
    assert!(!messages.iter().any(|m| m["method"] == "turn/started"));
    let ended = params_of(&messages, "turn/completed")[0];
    assert_eq!(ended["turn"]["id"], turn.as_str());
    assert_eq!(ended["turn"]["status"], "completed");

    // The child's next request of the same turn carries the command's output and the input.
    let requests = s.provider.requests();
    let next = requests
        .iter()
        .find(|r| user_texts(&r.body).iter().any(|t| t == "joined input"))
        .expect("the input reaches the child's model");
    let outputs = call_outputs(&next.body);
    assert!(
        outputs
            .iter()
            .any(|(id, output)| id == "call_gate" && output.contains("opened")),
        "{outputs:?}"
    );
}
