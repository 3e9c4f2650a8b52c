//! Token usage survives the daemon: each response's usage is persisted in the rollout, a
//! `thread/resume` in a new daemon sends `thread/tokenUsage/updated` with the last known usage
//! right after its response, and the next turn's `total` continues from the restored total. A
//! rollout written before usage lines existed still resumes (with no usage to report).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// Runs two turns in a first daemon and returns the id of the thread and of its last turn.
async fn thread_with_two_turns(home: &std::path::Path) -> (String, String) {
    let first_provider = provider(vec![text_reply(0, "one"), text_reply(1, "two")]).await;
    let mut first = Daemon::spawn(home, &mock_overrides(&first_provider));
    first.initialize().await;
    let id = first.start_thread(json!({})).await;
    text_turn(&mut first, &id, "q0").await;
    let second_turn = text_turn(&mut first, &id, "q1").await;
    let usage = second_turn
        .iter()
        .rev()
        .find(|m| m["method"] == "thread/tokenUsage/updated")
        .cloned()
        .unwrap_or_else(|| panic!("no usage in {second_turn:#?}"));
    assert_eq!(usage["params"]["tokenUsage"]["total"]["totalTokens"], 260);
    let turn_id = usage["params"]["turnId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    first.close_stdin();
    assert_eq!(first.wait_exit().await, Some(0));
    (id, turn_id)
}

/// Sends `thread/resume` and returns the messages after its response, up to the response of a
/// `thread/loaded/list` sent behind it.
async fn resume_and_messages_after(daemon: &mut Daemon, thread_id: &str) -> Vec<Value> {
    let resume_id = daemon
        .send_request("thread/resume", json!({"threadId": thread_id}))
        .await;
    let marker_id = daemon.send_request("thread/loaded/list", json!({})).await;
    let messages = daemon
        .collect_until(|m| m.get("id") == Some(&marker_id) && m.get("method").is_none())
        .await;
    let at = messages
        .iter()
        .position(|m| m.get("id") == Some(&resume_id) && m.get("method").is_none())
        .unwrap_or_else(|| panic!("no resume response in {messages:#?}"));
    assert!(messages[at].get("result").is_some(), "{:#?}", messages[at]);
    messages[at + 1..].to_vec()
}

#[tokio::test]
async fn resume_sends_last_usage_after_its_response_and_the_next_turn_counts_on_from_it() {
    let home = tempfile::tempdir().unwrap();
    let (id, last_turn_id) = thread_with_two_turns(home.path()).await;

    let second_provider = provider(vec![text_reply(2, "three")]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    let after = resume_and_messages_after(&mut second, &id).await;
    assert_eq!(
        after[0]["method"], "thread/tokenUsage/updated",
        "usage must follow the response at once: {after:#?}"
    );
    let params = &after[0]["params"];
    assert_eq!(params["threadId"], id.as_str());
    assert_eq!(params["turnId"], last_turn_id.as_str());
    assert_eq!(params["tokenUsage"]["total"]["totalTokens"], 260);
    assert_eq!(params["tokenUsage"]["total"]["inputTokens"], 200);
    assert_eq!(params["tokenUsage"]["last"]["totalTokens"], 130);

    let third_turn = text_turn(&mut second, &id, "q2").await;
    let usage = third_turn
        .iter()
        .find(|m| m["method"] == "thread/tokenUsage/updated")
        .unwrap_or_else(|| panic!("no usage in {third_turn:#?}"));
    assert_eq!(usage["params"]["tokenUsage"]["total"]["totalTokens"], 390);
    assert_eq!(usage["params"]["tokenUsage"]["last"]["totalTokens"], 130);
}

#[tokio::test]
async fn rollout_without_usage_lines_resumes_without_usage_and_counts_from_zero() {
    let home = tempfile::tempdir().unwrap();
    let (id, _) = thread_with_two_turns(home.path()).await;
    // What a file written before usage lines existed looks like.
    let path = rollout_of(home.path(), &id);
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: String = text
        .lines()
        .filter(|line| !line.contains(r#""type":"token_usage""#))
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(kept.len() < text.len(), "usage lines were never written");
    std::fs::write(&path, kept).unwrap();

    let second_provider = provider(vec![text_reply(2, "three")]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    let after = resume_and_messages_after(&mut second, &id).await;
    assert!(
        after
            .iter()
            .all(|m| m["method"] != "thread/tokenUsage/updated"),
        "{after:#?}"
    );
    let read = second
        .ok("thread/read", json!({"threadId": id, "includeTurns": true}))
        .await;
    assert_eq!(read["thread"]["turns"].as_array().map(Vec::len), Some(2));
    let third_turn = text_turn(&mut second, &id, "q2").await;
    let usage = third_turn
        .iter()
        .find(|m| m["method"] == "thread/tokenUsage/updated")
        .unwrap_or_else(|| panic!("no usage in {third_turn:#?}"));
    assert_eq!(usage["params"]["tokenUsage"]["total"]["totalTokens"], 130);
}
