//! Items always carry their times: the summary items of `turn/completed` and the items that
//! `thread/read` rebuilds from the rollout have integer `startedAtMs` and `completedAtMs`, with
//! the start no later than the end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

fn assert_timed(items: &[Value], context: &str) {
    assert!(!items.is_empty(), "{context}: no items");
    for item in items {
        let started = item["startedAtMs"].as_i64();
        let completed = item["completedAtMs"].as_i64();
        assert!(started.is_some(), "{context}: no startedAtMs in {item}");
        assert!(completed.is_some(), "{context}: no completedAtMs in {item}");
        assert!(
            started <= completed,
            "{context}: started after completed in {item}"
        );
    }
}

#[tokio::test]
async fn completed_turn_and_thread_read_items_carry_start_and_completion_times() {
    let provider = MockProvider::start(Script::new([text_reply(0, "Hello there")]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({})).await;
    let messages = text_turn(&mut daemon, &id, "hi").await;
    let completed = messages
        .iter()
        .find(|m| m["method"] == "turn/completed")
        .cloned()
        .expect("no turn/completed");
    let summary = completed["params"]["turn"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_timed(&summary, "turn/completed");

    let read = daemon
        .ok("thread/read", json!({"threadId": id, "includeTurns": true}))
        .await;
    let items = read["thread"]["turns"][0]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(items.len(), 2, "a user and an agent message: {read}");
    assert_timed(&items, "thread/read");
}
