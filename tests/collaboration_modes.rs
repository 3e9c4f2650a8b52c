//! Collaboration modes through the real binary (docs/PROTOCOL.md §5.1 and §6):
//! `collaborationMode/list` is refused without the experimental capability, as by the
//! reference, and otherwise answers the reference's two presets (Plan with effort `medium`,
//! then Default); a `turn/start` that sends the Plan preset back as `collaborationMode` runs in
//! plan mode: its request carries the plan-mode instructions and the preset's effort (winning
//! over the `effort` beside it), and the model's `<proposed_plan>` block becomes the plan item;
//! switching back to Default stops the instructions.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// A daemon whose connection opted into the experimental API (as the Codex TUI does).
async fn experimental_daemon(home: &std::path::Path, provider: &MockProvider) -> Daemon {
    let mut daemon = Daemon::spawn(home, &mock_overrides(provider));
    daemon
        .request(
            "initialize",
            json!({"clientInfo": {"name": "openturn-tests", "version": "1.0"},
                   "capabilities": {"experimentalApi": true}}),
        )
        .await;
    daemon.send(json!({"method": "initialized"})).await;
    daemon
}

fn mode_instructions(body: &Value) -> Vec<String> {
    developer_texts(body)
        .into_iter()
        .filter(|text| text.starts_with("<collaboration_mode>"))
        .collect()
}

#[tokio::test]
async fn the_list_needs_the_experimental_capability_and_names_plan_then_default() {
    let mut s = session(Script::new([]), &[], json!({})).await;
    let error = s.daemon.err("collaborationMode/list", json!({})).await;
    assert_eq!(error["code"], -32600, "{error}");
    assert_eq!(
        error["message"],
        "collaborationMode/list requires experimentalApi capability"
    );

    let provider = MockProvider::start(Script::new([])).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = experimental_daemon(home.path(), &provider).await;
    let presets = json!([
        {"name": "Plan", "mode": "plan", "model": null, "reasoning_effort": "medium"},
        {"name": "Default", "mode": "default", "model": null, "reasoning_effort": null},
    ]);
    // Fields the method does not take are ignored, as by the reference; absent params are `{}`.
    for params in [json!({}), json!({"unexpected": 1}), Value::Null] {
        let listed = daemon.ok("collaborationMode/list", params).await;
        assert_eq!(listed, json!({"data": presets}));
    }
}

#[tokio::test]
async fn the_plan_preset_sent_back_runs_the_turn_in_plan_mode() {
    let plan_answer = [
        "Here is the plan.\n<proposed_plan>\n# Rename\n",
        "- step one\n</proposed_plan>\n",
    ];
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &plan_answer),
        message_reply("r2", "m2", &["done"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = experimental_daemon(home.path(), &provider).await;
    let thread_id = daemon.start_thread(json!({})).await;

    // What the TUI does: the preset's mode and effort, with the thread's model.
    let listed = daemon.ok("collaborationMode/list", json!({})).await;
    let plan = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|preset| preset["mode"] == "plan")
        .unwrap()
        .clone();
    let turn = |text: &str, mode: &Value| {
        json!({"threadId": thread_id, "input": [{"type": "text", "text": text}],
               "effort": "low",
               "collaborationMode": {"mode": mode["mode"], "settings": {"model": "gpt-5",
                   "reasoning_effort": mode["reasoning_effort"], "developer_instructions": null}}})
    };
    daemon.ok("turn/start", turn("plan a rename", &plan)).await;
    let messages = daemon.until_turn_completed().await;
    let plans = items_of(&messages, "item/completed", "plan");
    assert_eq!(plans.len(), 1, "{messages:?}");
    assert_eq!(plans[0]["text"], "# Rename\n- step one\n");
    assert!(
        joined_deltas(&messages, "item/agentMessage/delta").contains("Here is the plan."),
        "the answer streams"
    );
    let body = &provider.requests()[0].body;
    let instructions = mode_instructions(body);
    assert_eq!(instructions.len(), 1, "{:?}", developer_texts(body));
    assert!(instructions[0].contains("You are in Plan mode."));
    assert!(instructions[0].ends_with("</collaboration_mode>"));
    assert_eq!(
        body["reasoning"]["effort"], "medium",
        "{}",
        body["reasoning"]
    );

    // Back to Default: no mode instructions, and the effort the client gives applies again.
    let default = json!({"mode": "default", "reasoning_effort": null});
    daemon.ok("turn/start", turn("now do it", &default)).await;
    daemon.until_turn_completed().await;
    let body = &provider.requests()[1].body;
    assert_eq!(mode_instructions(body), Vec::<String>::new());
    assert_eq!(body["reasoning"]["effort"], "low", "{}", body["reasoning"]);
}
