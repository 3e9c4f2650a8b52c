//! `thread/start` parameters and `turn/start` overrides reach the provider's request, and
//! `turn/start` overrides stick for later turns (docs/PROTOCOL.md §5.1).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::json;
use support::*;

#[tokio::test]
async fn start_params_and_sticky_turn_overrides_shape_the_requests() {
    let provider = MockProvider::start(Script::new([text_reply(0, "a"), text_reply(1, "b")]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let started = daemon
        .ok(
            "thread/start",
            json!({"model": "gpt-5-codex", "baseInstructions": "Be brief.",
                   "developerInstructions": "Answer in French.", "approvalPolicy": "never",
                   "sandbox": "workspace-write", "cwd": work.path()}),
        )
        .await;
    assert_eq!(started["model"], "gpt-5-codex");
    assert_eq!(started["approvalPolicy"], "never");
    assert_eq!(started["sandbox"]["type"], "workspaceWrite");
    let id = started["thread"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    daemon
        .ok(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "one"}],
                   "model": "gpt-5-mini", "effort": "high", "summary": "detailed"}),
        )
        .await;
    daemon.until_turn_completed().await;
    text_turn(&mut daemon, &id, "two").await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(first["model"], "gpt-5-mini");
    assert_eq!(first["instructions"], "Be brief.");
    assert_eq!(
        first["reasoning"],
        json!({"effort": "high", "summary": "detailed"})
    );
    assert_eq!(first["input"][0]["role"], "developer");
    assert_eq!(first["input"][0]["content"][0]["text"], "Answer in French.");
    let second = &requests[1].body;
    assert_eq!(second["model"], "gpt-5-mini", "turn overrides stick");
    assert_eq!(second["reasoning"]["effort"], "high");
}
