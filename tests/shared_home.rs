//! Two daemons on one `$OPENTURN_HOME` (every editor window spawns its own): the thread index
//! stays consistent while both write it, and a thread is written by one daemon at a time — the
//! other gets a clear error on resume but can still read it, and can take it over once released.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

fn listed_ids(list: &Value) -> Vec<String> {
    list["data"].as_array().map_or(Vec::new(), |d| {
        d.iter()
            .filter_map(|t| t["id"].as_str().map(str::to_string))
            .collect()
    })
}

#[tokio::test]
async fn two_daemons_share_the_index_and_never_write_the_same_thread() {
    let home = tempfile::tempdir().unwrap();
    let provider_a = provider(vec![text_reply(0, "from A")]).await;
    let provider_b = provider(vec![text_reply(1, "from B again")]).await;
    let mut a = Daemon::spawn(home.path(), &mock_overrides(&provider_a));
    let mut b = Daemon::spawn(home.path(), &mock_overrides(&provider_b));
    a.initialize().await;
    b.initialize().await;

    // Both create threads at the same time: every one lands in the shared index.
    let mut pending_a = Vec::new();
    let mut pending_b = Vec::new();
    for _ in 0..15 {
        pending_a.push(a.send_request("thread/start", json!({})).await);
        pending_b.push(b.send_request("thread/start", json!({})).await);
    }
    let mut created = Vec::new();
    for id in pending_a {
        created.push(a.response_to(id).await["result"]["thread"]["id"].clone());
    }
    for id in pending_b {
        created.push(b.response_to(id).await["result"]["thread"]["id"].clone());
    }
    let held_by_a = created[0].as_str().unwrap_or_default().to_string();
    text_turn(&mut a, &held_by_a, "hello from A").await;
    for daemon in [&mut a, &mut b] {
        let list = daemon.ok("thread/list", json!({"limit": 100})).await;
        let mut ids = listed_ids(&list);
        ids.sort();
        let mut expected: Vec<String> = created
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        expected.sort();
        assert_eq!(ids, expected);
    }
    let index = std::fs::read_to_string(home.path().join("thread_index.jsonl")).unwrap();
    for line in index.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("interleaved index line {line:?}: {e}"));
    }

    // B may read A's thread but not take it.
    let busy = b.err("thread/resume", json!({"threadId": held_by_a})).await;
    assert_eq!(busy["data"]["reason"], "thread_busy");
    assert!(busy["message"]
        .as_str()
        .is_some_and(|m| m.contains("in use by another openturn process")));
    let read = b
        .ok(
            "thread/read",
            json!({"threadId": held_by_a, "includeTurns": true}),
        )
        .await;
    assert_eq!(read["thread"]["turns"][0]["items"][1]["text"], "from A");
    let rename = b
        .err(
            "thread/name/set",
            json!({"threadId": held_by_a, "name": "mine"}),
        )
        .await;
    assert_eq!(rename["data"]["reason"], "thread_busy");
    let archive = b
        .err("thread/archive", json!({"threadId": held_by_a}))
        .await;
    assert_eq!(archive["data"]["reason"], "thread_busy");

    // Once A exits, B takes the thread over and appends to the same file cleanly.
    a.close_stdin();
    assert_eq!(a.wait_exit().await, Some(0));
    b.ok("thread/resume", json!({"threadId": held_by_a})).await;
    text_turn(&mut b, &held_by_a, "hello from B").await;
    let read = b
        .ok(
            "thread/read",
            json!({"threadId": held_by_a, "includeTurns": true}),
        )
        .await;
    assert_eq!(read["thread"]["turns"].as_array().map(Vec::len), Some(2));
    let rollout = std::fs::read_to_string(rollout_of(home.path(), &held_by_a)).unwrap();
    for line in rollout.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("bad rollout line {line:?}: {e}"));
    }
    // The index was updated by B's turn: the thread now sorts first by update time.
    let list = b
        .ok("thread/list", json!({"sortKey": "updated_at", "limit": 1}))
        .await;
    assert_eq!(list["data"][0]["id"], held_by_a.as_str());
    assert_eq!(list["data"][0]["preview"], "hello from A");
}

#[tokio::test]
async fn a_missing_index_is_rebuilt_from_the_rollouts() {
    let home = tempfile::tempdir().unwrap();
    let provider = provider(vec![text_reply(0, "answer")]).await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&provider));
    first.initialize().await;
    let id = first.start_thread(json!({})).await;
    text_turn(&mut first, &id, "remember me").await;
    first
        .ok("thread/name/set", json!({"threadId": id, "name": "titled"}))
        .await;
    first.close_stdin();
    assert_eq!(first.wait_exit().await, Some(0));
    std::fs::remove_file(home.path().join("thread_index.jsonl")).unwrap();

    let mut second = Daemon::spawn(home.path(), &mock_overrides(&provider));
    second.initialize().await;
    let list = second.ok("thread/list", json!({})).await;
    assert_eq!(listed_ids(&list), vec![id.clone()]);
    assert_eq!(list["data"][0]["preview"], "remember me");
    assert_eq!(list["data"][0]["name"], "titled");
    // A stale index (another format version) is rebuilt too.
    std::fs::write(
        home.path().join("thread_index.jsonl"),
        "{\"openturn_thread_index\":0}\n",
    )
    .unwrap();
    let mut third = Daemon::spawn(home.path(), &mock_overrides(&provider));
    third.initialize().await;
    let list = third.ok("thread/list", json!({})).await;
    assert_eq!(listed_ids(&list), vec![id]);
}
