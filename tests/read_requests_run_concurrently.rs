//! Read-only requests run beside the ordered ones: a `thread/read` with turns of a very large
//! rollout does not hold up a `turn/interrupt` or `thread/loaded/list` sent right after it, while
//! requests whose order matters keep arrival order, and every request gets exactly one response.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use openturn::core::{TurnItem, UserInput};
use openturn::rollout::{RolloutItem, RolloutLine, SessionMeta};
use openturn::wire::ResponseItem;
use serde_json::{json, Value};
use support::*;

const LARGE_THREAD_ID: &str = "0190f5a1-0000-7000-8000-00000000beef";
/// Turn items (a user and an agent message per turn) in the large rollout.
const LARGE_ITEMS: usize = 5_000;

fn line(item: RolloutItem) -> String {
    let text = serde_json::to_string(&RolloutLine::now(item)).unwrap();
    format!("{text}\n")
}

fn turn_item(turn_id: &str, item: &TurnItem) -> RolloutItem {
    RolloutItem::TurnItem {
        turn_id: turn_id.to_string(),
        item: serde_json::to_value(item).unwrap(),
        started_at_ms: None,
        completed_at_ms: None,
    }
}

/// Writes a completed thread of `LARGE_ITEMS` turn items straight into `home`'s sessions, as
/// a long-lived thread's rollout would look.
fn write_large_rollout(home: &Path) {
    let created = chrono::Utc::now();
    let path = openturn::rollout::paths::rollout_path(home, LARGE_THREAD_ID, created);
    std::fs::create_dir_all(path.parent().unwrap_or(home)).unwrap();
    let mut out = line(RolloutItem::SessionMeta(SessionMeta {
        id: LARGE_THREAD_ID.to_string(),
        created_at: created.timestamp(),
        cwd: "/tmp".to_string(),
        model: "gpt-5".to_string(),
        model_provider: "mock".to_string(),
        originator: None,
        cli_version: "0.0.0".to_string(),
        forked_from_id: None,
        source: None,
        settings: None,
    }));
    let filler = "lorem ipsum dolor sit amet ".repeat(8);
    for n in 0..LARGE_ITEMS / 2 {
        let turn_id = format!("turn-{n}");
        let question = format!("question {n}: {filler}");
        let answer = format!("answer {n}: {filler}");
        out += &line(RolloutItem::TurnStarted {
            turn_id: turn_id.clone(),
            started_at: created.timestamp(),
        });
        out += &line(RolloutItem::ResponseItem(ResponseItem::user_text(
            &question,
        )));
        out += &line(turn_item(
            &turn_id,
            &TurnItem::UserMessage {
                id: format!("user-{n}").into(),
                content: vec![UserInput::Text { text: question }],
                client_id: None,
            },
        ));
        out += &line(turn_item(
            &turn_id,
            &TurnItem::AgentMessage {
                id: format!("msg-{n}").into(),
                text: answer,
                phase: None,
                memory_citation: None,
            },
        ));
        out += &line(RolloutItem::TurnEnded {
            turn_id,
            status: "completed".to_string(),
            error: None,
            completed_at: created.timestamp(),
            duration_ms: None,
        });
    }
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(out.as_bytes()).unwrap();
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("id") == Some(id) && message.get("method").is_none()
}

#[tokio::test]
async fn large_thread_read_does_not_delay_interrupt_or_loaded_list_sent_after_it() {
    let home = tempfile::tempdir().unwrap();
    write_large_rollout(home.path());
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    // Shape checks of a multi-megabyte response would dominate the test's time.
    daemon.check_shapes = false;
    daemon.initialize().await;
    let live = daemon.start_thread(json!({})).await;

    let read_id = daemon
        .send_request(
            "thread/read",
            json!({"threadId": LARGE_THREAD_ID, "includeTurns": true}),
        )
        .await;
    let interrupt_id = daemon
        .send_request(
            "turn/interrupt",
            json!({"threadId": live, "turnId": "no-such-turn"}),
        )
        .await;
    let loaded_id = daemon.send_request("thread/loaded/list", json!({})).await;
    let messages = daemon.collect_until(|m| is_response_to(m, &read_id)).await;
    let responses_before_read: Vec<&Value> = messages
        .iter()
        .filter(|m| m.get("method").is_none() && !is_response_to(m, &read_id))
        .collect();
    assert!(
        responses_before_read
            .iter()
            .any(|m| is_response_to(m, &interrupt_id)),
        "turn/interrupt waited for the large read: {responses_before_read:#?}"
    );
    assert!(
        responses_before_read
            .iter()
            .any(|m| is_response_to(m, &loaded_id)
                && m["result"]["data"] == json!([live.as_str()])),
        "thread/loaded/list waited for the large read: {responses_before_read:#?}"
    );
    let read = messages.last().cloned().unwrap_or_default();
    let turns = read["result"]["thread"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("thread/read failed: {}", read["error"]));
    assert_eq!(turns.len(), LARGE_ITEMS / 2);
    let last = &turns[LARGE_ITEMS / 2 - 1];
    assert_eq!(last["id"], format!("turn-{}", LARGE_ITEMS / 2 - 1));
    assert_eq!(last["items"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn ordered_requests_keep_arrival_order_and_every_request_gets_one_response() {
    let home = tempfile::tempdir().unwrap();
    write_large_rollout(home.path());
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.check_shapes = false;
    daemon.initialize().await;
    let live = daemon.start_thread(json!({})).await;

    let mut ordered = Vec::new();
    let mut all = Vec::new();
    for n in 0..10 {
        // Paged reads: each still parses the whole rollout, without a multi-megabyte answer.
        let read =
            json!({"threadId": LARGE_THREAD_ID, "includeTurns": n % 3 == 0, "turnsLimit": 5});
        all.push(daemon.send_request("thread/read", read).await);
        let name = json!({"threadId": live, "name": format!("name {n}")});
        let id = daemon.send_request("thread/name/set", name).await;
        ordered.push(id.clone());
        all.push(id);
        all.push(daemon.send_request("thread/list", json!({})).await);
        all.push(daemon.send_request("config/read", json!({})).await);
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut ordered_seen = Vec::new();
    // Bounded: each message read is bounded by the daemon client's timeout.
    while counts.len() < all.len() {
        let message = daemon.next_message().await;
        if message.get("method").is_some() {
            continue;
        }
        assert!(message.get("result").is_some(), "{message}");
        let id = message["id"].clone();
        *counts.entry(id.to_string()).or_default() += 1;
        if ordered.contains(&id) {
            ordered_seen.push(id);
        }
    }
    assert_eq!(
        ordered_seen, ordered,
        "thread/name/set answered out of order"
    );
    // A last ordered request: a duplicate of any earlier response would have to arrive before
    // this one's, since no request is still running by then except the ones already answered.
    let final_read = daemon.ok("thread/read", json!({"threadId": live})).await;
    assert_eq!(final_read["thread"]["name"], "name 9");
    for id in &all {
        assert_eq!(counts.get(&id.to_string()), Some(&1), "responses to {id}");
    }
    let extra = daemon
        .transcript
        .iter()
        .filter(|m| m.get("method").is_none() && all.contains(&m["id"]))
        .count();
    assert_eq!(extra, all.len(), "a request got more than one response");
}
