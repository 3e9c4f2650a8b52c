//! `thread/settings/update` and `turn/settings/update` through the real binary: both refused
//! without the experimental capability (as the reference refuses them); a thread's update is
//! announced with `thread/settings/updated`, reaches the next request (a collaboration mode's
//! model winning over the plain one), and is recorded so a resume after a restart sends it too;
//! a running turn's update reaches that turn's next request only, is `applied` while it runs and
//! `targetUnavailable` once it ended, and needs `features.step_model_switching` as the
//! reference's does; bad params are refused with -32602 naming the field.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// A daemon whose connection opted into the experimental API, with one started (or resumed)
/// thread.
async fn experimental_daemon(home: &Path, overrides: &[String]) -> Daemon {
    let mut daemon = Daemon::spawn(home, overrides);
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

async fn text_turn_on(daemon: &mut Daemon, thread_id: &str, text: &str) -> Vec<Value> {
    text_turn(daemon, thread_id, text).await
}

#[tokio::test]
async fn both_methods_need_the_experimental_capability() {
    let mut s = session(Script::new([]), &[], json!({})).await;
    let error = s
        .daemon
        .err(
            "thread/settings/update",
            json!({"threadId": s.thread_id, "model": "m"}),
        )
        .await;
    assert_eq!(error["code"], -32600, "{error}");
    assert_eq!(
        error["message"],
        "thread/settings/update requires experimentalApi capability"
    );
    let error = s
        .daemon
        .err(
            "turn/settings/update",
            json!({"threadId": s.thread_id, "turnId": "t", "model": "m"}),
        )
        .await;
    assert_eq!(error["code"], -32600, "{error}");
    assert_eq!(
        error["message"],
        "turn/settings/update requires experimentalApi capability"
    );
}

#[tokio::test]
async fn thread_settings_reach_the_next_request_and_survive_a_restart() {
    let provider = MockProvider::start(Script::new([
        text_reply(0, "one"),
        text_reply(1, "two"),
        text_reply(2, "three"),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let overrides = mock_overrides(&provider);
    let mut daemon = experimental_daemon(home.path(), &overrides).await;
    let thread_id = daemon.start_thread(json!({})).await;
    text_turn_on(&mut daemon, &thread_id, "first").await;
    let configured_model = provider.requests()[0].body["model"].clone();

    let response = daemon
        .request(
            "thread/settings/update",
            json!({"threadId": thread_id, "model": "gpt-plain", "approvalPolicy": "never",
                   "sandboxPolicy": {"type": "workspaceWrite"}, "effort": "high",
                   "collaborationMode": {"mode": "plan", "settings": {"model": "gpt-plan",
                       "reasoning_effort": "low", "developer_instructions": null}}}),
        )
        .await;
    assert_eq!(response["result"], json!({}), "{response}");
    let updated = daemon.notification("thread/settings/updated").await;
    let settings = &updated["params"]["threadSettings"];
    assert_eq!(updated["params"]["threadId"], thread_id.as_str());
    assert_eq!(settings["model"], "gpt-plan", "{settings}");
    assert_eq!(settings["effort"], "low", "{settings}");
    assert_eq!(settings["approvalPolicy"], "never");
    assert_eq!(settings["sandboxPolicy"]["type"], "workspaceWrite");
    assert_eq!(settings["collaborationMode"]["mode"], "plan");

    text_turn_on(&mut daemon, &thread_id, "second").await;
    let requests = provider.requests();
    assert_ne!(configured_model, "gpt-plan");
    assert_eq!(requests[1].body["model"], "gpt-plan");

    // Without `features.step_model_switching` a running turn's settings stay as they are.
    let error = daemon
        .err(
            "turn/settings/update",
            json!({"threadId": thread_id, "turnId": "t", "model": "m"}),
        )
        .await;
    assert_eq!(error["code"], -32600, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("step_model_switching"),
        "{error}"
    );
    for (params, field) in [
        (json!({"threadId": thread_id, "model": 5}), "model"),
        (json!({"threadId": thread_id, "cwd": "relative"}), "cwd"),
        (
            json!({"threadId": thread_id, "summary": "verbose"}),
            "summary",
        ),
        (
            json!({"threadId": thread_id, "collaborationMode": {"mode": "sideways",
                "settings": {"model": "m"}}}),
            "collaborationMode.mode",
        ),
    ] {
        let error = daemon.err("thread/settings/update", params).await;
        assert_eq!(error["code"], -32602, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains(field),
            "{error} should name {field}"
        );
    }
    // An update right before the daemon stops, with no turn after it, is recorded too.
    daemon
        .ok(
            "thread/settings/update",
            json!({"threadId": thread_id, "model": "gpt-last"}),
        )
        .await;
    daemon.exit_cleanly().await;

    // A new daemon resumes the thread with the settings the updates recorded.
    let mut daemon = experimental_daemon(home.path(), &overrides).await;
    let resumed = daemon
        .ok("thread/resume", json!({"threadId": thread_id}))
        .await;
    assert_eq!(resumed["model"], "gpt-last", "{resumed}");
    assert_eq!(resumed["approvalPolicy"], "never", "{resumed}");
    assert_eq!(resumed["sandbox"]["type"], "workspaceWrite", "{resumed}");
    text_turn_on(&mut daemon, &thread_id, "third").await;
    assert_eq!(provider.requests()[2].body["model"], "gpt-last");
    daemon.exit_cleanly().await;
}

fn escalated(cmd: &str) -> Value {
    json!({"cmd": cmd, "login": false, "sandbox_permissions": "require_escalated",
        "justification": "Need to create a file"})
}

#[tokio::test]
async fn a_running_turns_settings_reach_its_next_request_only() {
    let workdir = tempfile::tempdir().unwrap();
    let first = ResponseBuilder::new("r1")
        .created()
        .exec_call("fc_1", "call_1", escalated("touch nope.txt"))
        .completed(Usage::small(), None)
        .build();
    let provider = MockProvider::start(Script::new([
        first,
        message_reply("r2", "m2", &["after"]),
        text_reply(3, "next turn"),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.push("features.step_model_switching=true".to_string());
    let mut daemon = experimental_daemon(home.path(), &overrides).await;
    let thread_id = daemon
        .start_thread(json!({"approvalPolicy": "on-request",
                             "cwd": workdir.path().display().to_string()}))
        .await;
    let started = daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
        )
        .await;
    let turn_id = started["turn"]["id"].as_str().unwrap().to_string();
    // The turn waits on the approval: it is running, between two requests.
    let approval = daemon
        .collect_until(|m| m["method"] == turn_support::COMMAND_APPROVAL)
        .await
        .pop()
        .unwrap();
    let applied = daemon
        .ok(
            "turn/settings/update",
            json!({"threadId": thread_id, "turnId": turn_id, "model": "gpt-switched"}),
        )
        .await;
    assert_eq!(applied, json!({"status": "applied"}));
    let error = daemon
        .err(
            "turn/settings/update",
            json!({"threadId": thread_id, "turnId": turn_id, "sandboxPolicy": {"type": "readOnly"}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("sandboxPolicy"),
        "{error}"
    );
    daemon
        .send(json!({"id": approval["id"], "result": {"decision": "decline"}}))
        .await;
    daemon.until_turn_completed().await;
    let unavailable = daemon
        .ok(
            "turn/settings/update",
            json!({"threadId": thread_id, "turnId": turn_id, "model": "gpt-late"}),
        )
        .await;
    assert_eq!(unavailable, json!({"status": "targetUnavailable"}));
    text_turn_on(&mut daemon, &thread_id, "again").await;

    let requests = provider.requests();
    assert_ne!(requests[0].body["model"], "gpt-switched");
    assert_eq!(requests[1].body["model"], "gpt-switched");
    // The thread's own settings did not change: the next turn is back on its model.
    assert_eq!(requests[2].body["model"], requests[0].body["model"]);
    daemon.exit_cleanly().await;
}
