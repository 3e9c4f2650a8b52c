//! The ACP bridge's `/goal` command (`@agentclientprotocol/codex-acp`, pinned in
//! `tests/acp/package.json`) against openturn: `/goal <objective>` sets an active goal with
//! `thread/goal/set`, openturn starts the goal's turn by itself, the bridge follows that turn to
//! its end (the model marks the goal complete with `update_goal`, then answers) and the prompt
//! ends with `end_turn`, no further turn following; `/goal clear` removes the goal with
//! `thread/goal/clear`. Nothing openturn answers the bridge is an error.
//! Skipped without node or the bridge, except under `CI=true` (see `tests/acp_bridge.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod acp_support;
mod support;
mod turn_support;

use serde_json::{json, Value};

use acp_support::*;
use support::*;
use turn_support::*;

fn update_goal_reply(id: &str, status: &str) -> Reply {
    ResponseBuilder::new(id)
        .created()
        .function_call_json(
            &format!("fc_{id}"),
            &format!("call_{id}"),
            "update_goal",
            json!({ "status": status }),
        )
        .completed(Usage::small(), None)
        .build()
}

#[tokio::test]
async fn the_acp_bridge_goal_command_runs_the_goal_to_completion_and_clears_it() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let provider = MockProvider::start(Script::new([
        update_goal_reply("r1", "complete"),
        message_reply("r2", "m2", &["BRIDGE-GOAL: the list is sorted."]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let cwd = project.path().display().to_string();
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let prompt =
        |text: &str| json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});

    let (result, seen) = client
        .ok("session/prompt", prompt("/goal Sort the shopping list"))
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let text = chunk_text(&updates(&seen, "agent_message_chunk"));
    assert!(text.contains("BRIDGE-GOAL: the list is sorted."), "{text}");
    let requests = provider.requests();
    assert_eq!(
        requests.len(),
        2,
        "one goal turn: the tool call and the answer"
    );
    assert!(
        requests[0].body["input"]
            .to_string()
            .contains("Sort the shopping list"),
        "the goal's turn never carried the objective"
    );

    // Clearing removes the completed goal and starts nothing.
    let (result, _) = client.ok("session/prompt", prompt("/goal clear")).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    client.shutdown().await;
    assert_eq!(
        provider.requests().len(),
        2,
        "a turn started after the goal ended"
    );

    let sent = recorded(&home.path().join("bridge-in.jsonl"));
    let goal_sets: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"] == "thread/goal/set")
        .map(|m| &m["params"])
        .collect();
    assert_eq!(goal_sets[0]["objective"], "Sort the shopping list");
    assert_eq!(goal_sets[0]["status"], "active");
    assert!(
        sent.iter().any(|m| m["method"] == "thread/goal/clear"),
        "the bridge never cleared the goal"
    );
    let answers = answers_without_errors(home.path());
    assert!(
        answers
            .iter()
            .any(|m| m["method"] == "thread/goal/updated"
                && m["params"]["goal"]["status"] == "complete"),
        "openturn never announced the completed goal"
    );
    assert!(
        answers.iter().any(|m| m["method"] == "thread/goal/cleared"),
        "openturn never announced the cleared goal"
    );
}
