//! `thread/items/list` pages a thread's stored items: `thread/resume` hands out
//! `itemsBackwardsCursor`, whose first descending page is the newest item; ascending pages from
//! the start cover every item exactly once, in order, each with its turn. Every answer is
//! checked against the reference schema by the test support.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn item_ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["item"]["id"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn items_page_forward_and_back_after_a_resume() {
    let mut s = session(
        Script::new([
            message_reply("r1", "m1", &["first"]),
            message_reply("r2", "m2", &["second"]),
        ]),
        &[],
        json!({}),
    )
    .await;
    for text in ["one", "two"] {
        s.start_turn(text, json!({})).await;
        s.daemon.until_turn_completed().await;
    }
    let thread_id = s.thread_id.clone();
    s.daemon.close_stdin();
    let _ = tokio::time::timeout(TIMEOUT, s.daemon.child.wait()).await;

    let mut daemon = Daemon::spawn(s.home.path(), &mock_overrides(&s.provider));
    daemon.initialize().await;
    let resumed = daemon
        .ok(
            "thread/resume",
            json!({"threadId": thread_id, "excludeTurns": true}),
        )
        .await;
    let cursor = resumed["itemsBackwardsCursor"].clone();
    assert!(cursor.is_string(), "{resumed}");

    let newest = daemon
        .ok(
            "thread/items/list",
            json!({"threadId": thread_id, "cursor": cursor, "limit": 1, "sortDirection": "desc"}),
        )
        .await;
    assert_eq!(item_ids(&newest), vec!["m2".to_string()]);

    let mut seen: Vec<(String, String)> = Vec::new();
    let mut cursor = Value::Null;
    for _ in 0..10 {
        let page = daemon
            .ok(
                "thread/items/list",
                json!({"threadId": thread_id, "cursor": cursor, "limit": 3}),
            )
            .await;
        for entry in page["data"].as_array().into_iter().flatten() {
            seen.push((
                entry["turnId"].as_str().unwrap_or_default().to_string(),
                entry["item"]["type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ));
        }
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|(_, kind)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec!["userMessage", "agentMessage", "userMessage", "agentMessage"]
    );
    assert_eq!(seen[0].0, seen[1].0, "an item keeps its turn");
    assert_ne!(seen[1].0, seen[2].0);

    // One turn only, and an anchor inside it.
    let turn = seen[2].0.clone();
    let in_turn = daemon
        .ok(
            "thread/items/list",
            json!({"threadId": thread_id, "turnId": turn, "cursor": {"type": "item", "itemId": "m2"},
                "sortDirection": "desc"}),
        )
        .await;
    assert_eq!(in_turn["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(in_turn["data"][0]["item"]["type"], "userMessage");

    let bad = daemon
        .err(
            "thread/items/list",
            json!({"threadId": thread_id, "cursor": "not-a-cursor"}),
        )
        .await;
    assert!(
        bad["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not-a-cursor"),
        "{bad}"
    );
    let unknown_turn = daemon
        .err(
            "thread/items/list",
            json!({"threadId": thread_id, "turnId": "no-such-turn"}),
        )
        .await;
    assert!(unknown_turn["message"]
        .as_str()
        .unwrap_or_default()
        .contains("no-such-turn"));
}
