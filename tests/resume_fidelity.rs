//! A thread resumed after a daemon restart builds its next request as the thread would have
//! before: the `dynamicTools` of `thread/start`, its instructions and policies, and the sticky
//! `turn/start` overrides (model, effort, summary, approval policy, sandbox, cwd, plan mode) are
//! kept in the rollout and restored, unless the resume call overrides them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// The parts of a request body that settings decide.
fn shaped_by_settings(body: &Value) -> Value {
    json!({
        "tools": body["tools"],
        "model": body["model"],
        "reasoning": body["reasoning"],
        "instructions": body["instructions"],
        "developer": body["input"][0],
    })
}

#[tokio::test]
async fn resume_after_restart_restores_dynamic_tools_plan_mode_and_sticky_overrides() {
    let home = tempfile::tempdir().unwrap();
    let start_cwd = tempfile::tempdir().unwrap();
    let turn_cwd = tempfile::tempdir().unwrap();
    let first_provider = provider(vec![text_reply(0, "First answer")]).await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_provider));
    first.initialize().await;
    let id = first
        .start_thread(json!({
            "model": "gpt-5-codex", "baseInstructions": "Be brief.",
            "developerInstructions": "Answer in French.", "approvalPolicy": "never",
            "sandbox": "read-only", "cwd": start_cwd.path(),
            "dynamicTools": [{"name": "lookup_ticket", "description": "Look up a ticket",
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}],
        }))
        .await;
    first
        .ok(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "q0"}],
                   "model": "gpt-5-mini", "effort": "high", "summary": "detailed",
                   "approvalPolicy": "untrusted", "cwd": turn_cwd.path(),
                   "sandboxPolicy": {"type": "workspaceWrite"},
                   "collaborationMode": {"mode": "plan"}}),
        )
        .await;
    first.until_turn_completed().await;
    first.exit_cleanly().await;

    let plan_text = "Intro\n<proposed_plan>\n- step one\n</proposed_plan>\n";
    let second_provider = provider(vec![text_reply(1, plan_text)]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    let resumed = second.ok("thread/resume", json!({"threadId": id})).await;
    assert_eq!(resumed["model"], "gpt-5-mini");
    assert_eq!(resumed["approvalPolicy"], "untrusted");
    assert_eq!(resumed["sandbox"]["type"], "workspaceWrite");
    assert_eq!(resumed["collaborationMode"]["mode"], "plan");
    assert_eq!(
        resumed["collaborationMode"]["settings"]["model"],
        "gpt-5-mini"
    );
    assert_eq!(
        resumed["cwd"],
        turn_cwd.path().display().to_string(),
        "the turn's cwd override sticks across the restart"
    );
    let turn = text_turn(&mut second, &id, "q1").await;

    let before = &first_provider.requests()[0].body;
    let after = &second_provider.requests()[0].body;
    assert_eq!(shaped_by_settings(after), shaped_by_settings(before));
    let tools: Vec<&str> = after["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(tools.contains(&"lookup_ticket"), "{tools:?}");
    assert_eq!(after["model"], "gpt-5-mini");
    assert_eq!(
        after["reasoning"],
        json!({"effort": "high", "summary": "detailed"})
    );
    // Plan mode stuck too: the proposed plan became a plan item.
    assert!(
        methods(&turn).iter().any(|m| m == "item/plan/delta"),
        "{:?}",
        methods(&turn)
    );
}

#[tokio::test]
async fn resume_overrides_win_over_what_the_rollout_recorded_and_are_recorded_in_turn() {
    let home = tempfile::tempdir().unwrap();
    let first_provider = provider(vec![text_reply(0, "a")]).await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_provider));
    first.initialize().await;
    let id = first
        .start_thread(json!({"model": "gpt-5-codex", "baseInstructions": "Be brief."}))
        .await;
    first
        .ok(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "q0"}],
                   "effort": "high"}),
        )
        .await;
    first.until_turn_completed().await;
    first.exit_cleanly().await;

    let second_provider = provider(vec![text_reply(1, "b")]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    second
        .ok(
            "thread/resume",
            json!({"threadId": id, "model": "gpt-5-nano", "baseInstructions": "Be thorough."}),
        )
        .await;
    text_turn(&mut second, &id, "q1").await;
    second.exit_cleanly().await;

    // A third daemon keeps what the second one was told.
    let third_provider = provider(vec![text_reply(2, "c")]).await;
    let mut third = Daemon::spawn(home.path(), &mock_overrides(&third_provider));
    third.initialize().await;
    third.ok("thread/resume", json!({"threadId": id})).await;
    text_turn(&mut third, &id, "q2").await;
    for body in [
        &second_provider.requests()[0].body,
        &third_provider.requests()[0].body,
    ] {
        assert_eq!(body["model"], "gpt-5-nano");
        assert_eq!(body["instructions"], "Be thorough.");
        assert_eq!(body["reasoning"]["effort"], "high");
    }
}
