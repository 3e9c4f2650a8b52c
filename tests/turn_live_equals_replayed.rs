//! A turn reads the same live and replayed. The `Turn` a client got in `turn/completed` is the
//! `Turn` `thread/read` (includeTurns) returns for it — before and after a daemon restart, and as
//! `thread/resume` and `thread/fork` return it after the restart: the same id, status, error,
//! start and completion times and `durationMs`, for a completed turn with items, an interrupted
//! turn and a failed turn with an error. Only what the two views carry differs by design:
//! `turn/completed` summarizes a completed turn with its last response's messages, a rebuilt
//! turn carries every stored item; each summarized item is among them exactly, its
//! `startedAtMs` and `completedAtMs` included, and every item the client saw complete
//! (`item/completed`) is among them exactly too: core stamps an item's times once and stores
//! them with the item.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::mock_provider::{ResponseBuilder, Usage};
use support::*;

/// A completed turn with two messages, paced so its duration is a few hundred milliseconds (a
/// figure rebuilt from whole-second timestamps could not match it by chance).
fn completed_reply() -> Reply {
    let reply = ResponseBuilder::new("resp_done")
        .created()
        .text_message("msg_first", &["first ", "answer"])
        .text_message("msg_second", &["second ", "answer"])
        .completed(Usage::example(), None)
        .into_reply()
        .with_pace(Duration::from_millis(40));
    Reply::Sse(reply)
}

/// A message, then the stream stays open until the turn is interrupted.
fn stalled_reply() -> Reply {
    let reply = ResponseBuilder::new("resp_stalled")
        .created()
        .text_message("msg_partial", &["partial"])
        .into_reply()
        .held_open_after_end();
    Reply::Sse(reply)
}

/// A failure the turn does not retry.
fn failed_reply() -> Reply {
    let events = ResponseBuilder::new("resp_failed")
        .created()
        .failed("server_is_overloaded", "Model at capacity")
        .into_events();
    Reply::sse(events)
}

/// The turn of `turn/completed` among `messages`.
fn completed_turn(messages: &[Value]) -> Value {
    messages
        .iter()
        .find(|m| m["method"] == "turn/completed")
        .map(|m| m["params"]["turn"].clone())
        .unwrap_or_else(|| panic!("no turn/completed in {messages:#?}"))
}

/// A turn without its items and items view: the facts both views must agree on.
fn facts(turn: &Value) -> Value {
    let mut facts = turn.clone();
    if let Some(object) = facts.as_object_mut() {
        object.remove("items");
        object.remove("itemsView");
    }
    facts
}

/// The items of every `item/completed` in `messages`, in order.
fn completed_items(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "item/completed")
        .map(|m| m["params"]["item"].clone())
        .collect()
}

/// A turn as the client saw it live: its `turn/completed` turn, and the items it saw complete.
struct LiveTurn {
    turn: Value,
    completed_items: Vec<Value>,
}

impl LiveTurn {
    fn from_messages(messages: &[Value]) -> LiveTurn {
        LiveTurn {
            turn: completed_turn(messages),
            completed_items: completed_items(messages),
        }
    }
}

/// Checks `replayed` (the turns a read, resume or fork returned) against the live turns.
fn assert_same_turns(live: &[LiveTurn], replayed: &Value, context: &str) {
    let replayed = replayed
        .as_array()
        .unwrap_or_else(|| panic!("{context}: no turns in {replayed}"));
    assert_eq!(replayed.len(), live.len(), "{context}: {replayed:#?}");
    for (live, replayed) in live.iter().zip(replayed) {
        assert_eq!(facts(replayed), facts(&live.turn), "{context}");
        assert_eq!(replayed["itemsView"], "full", "{context}");
        let stored: &Vec<Value> = replayed["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{context}: no items in {replayed}"));
        let summarized = live.turn["items"].as_array().into_iter().flatten();
        for item in summarized.chain(&live.completed_items) {
            assert!(
                stored.contains(item),
                "{context}: the live item {item} is not among the rebuilt {stored:#?}"
            );
        }
        // Nothing is stored that the client did not see complete.
        assert_eq!(stored, &live.completed_items, "{context}");
        // Every turn recorded the user's input.
        assert_eq!(stored[0]["type"], "userMessage", "{context}: {stored:#?}");
    }
}

async fn read_turns(daemon: &mut Daemon, thread_id: &str) -> Value {
    daemon
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await["thread"]["turns"]
        .clone()
}

#[tokio::test]
async fn the_turn_of_turn_completed_is_the_turn_thread_read_returns_before_and_after_a_restart() {
    let provider = MockProvider::start(Script::new([
        completed_reply(),
        stalled_reply(),
        failed_reply(),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;

    let completed_messages = text_turn(&mut daemon, &thread_id, "answer twice").await;
    let completed = completed_turn(&completed_messages);

    let started = daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "stall"}]}),
        )
        .await;
    let turn_id = started["turn"]["id"].clone();
    let mut interrupted_messages = daemon
        .collect_until(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "agentMessage"
        })
        .await;
    daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await;
    interrupted_messages.extend(daemon.until_turn_completed().await);
    let interrupted = completed_turn(&interrupted_messages);

    let failed_messages = text_turn(&mut daemon, &thread_id, "fail").await;
    let failed = completed_turn(&failed_messages);

    // The three endings are what this test is about; a script that ended them otherwise would
    // make the comparison vacuous.
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["itemsView"], "summary");
    let summarized: Vec<&Value> = completed["items"].as_array().unwrap().iter().collect();
    assert_eq!(summarized.len(), 2, "{completed}");
    assert!(
        completed["durationMs"].as_i64().unwrap() >= 100,
        "{completed}"
    );
    assert_eq!(interrupted["status"], "interrupted");
    assert_eq!(interrupted["error"], Value::Null);
    assert_eq!(failed["status"], "failed");
    assert!(
        failed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Model at capacity")),
        "{failed}"
    );
    assert_eq!(failed["error"]["codexErrorInfo"], "serverOverloaded");
    // The paced messages were open for a while: an item's start and end differ, so a rebuilt
    // item stamped with one time for both ends (its line's write time) could not match it.
    for item in &summarized {
        let started = item["startedAtMs"].as_i64().unwrap();
        let completed = item["completedAtMs"].as_i64().unwrap();
        assert!(started < completed, "{item}");
    }
    let live = [
        LiveTurn::from_messages(&completed_messages),
        LiveTurn::from_messages(&interrupted_messages),
        LiveTurn::from_messages(&failed_messages),
    ];

    let before_restart = read_turns(&mut daemon, &thread_id).await;
    assert_same_turns(&live, &before_restart, "thread/read");

    // After a restart the turns come from the rollout alone.
    daemon.kill9().await;
    let mut restarted = Daemon::spawn(home.path(), &mock_overrides(&provider));
    restarted.initialize().await;
    let after_restart = read_turns(&mut restarted, &thread_id).await;
    assert_same_turns(&live, &after_restart, "thread/read after a restart");
    assert_eq!(after_restart, before_restart);

    let resumed = restarted
        .ok("thread/resume", json!({"threadId": thread_id}))
        .await;
    assert_same_turns(
        &live,
        &resumed["thread"]["turns"],
        "thread/resume after a restart",
    );
    let forked = restarted
        .ok("thread/fork", json!({"threadId": thread_id}))
        .await;
    assert_same_turns(
        &live,
        &forked["thread"]["turns"],
        "thread/fork after a restart",
    );
}

const OLD_THREAD_ID: &str = "0190f5a1-0000-7000-8000-0000000001d0";

/// A rollout as an earlier version wrote it, byte for byte: turn ends without `duration_ms`, a
/// failed turn's stored error, and a last turn that never ended (the daemon was killed).
fn old_rollout_lines() -> Vec<String> {
    let meta = format!(
        r#"{{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{{"id":"{OLD_THREAD_ID}","created_at":1767225600,"cwd":"/tmp","model":"gpt-5","model_provider":"mock","originator":null,"cli_version":"0.1.0","forked_from_id":null,"source":null}}}}"#
    );
    let lines = [
        meta.as_str(),
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"turn_started","payload":{"turn_id":"turn-done","started_at":1767225601}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.100Z","type":"turn_item","payload":{"turn_id":"turn-done","item":{"type":"user_message","id":"u1","content":[{"type":"text","text":"hello"}]}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.200Z","type":"turn_item","payload":{"turn_id":"turn-done","item":{"type":"agent_message","id":"m1","text":"hi there"}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"turn_ended","payload":{"turn_id":"turn-done","status":"completed","error":null,"completed_at":1767225604}}"#,
        r#"{"timestamp":"2026-01-01T00:00:05.000Z","type":"turn_started","payload":{"turn_id":"turn-failed","started_at":1767225605}}"#,
        r#"{"timestamp":"2026-01-01T00:00:05.100Z","type":"turn_item","payload":{"turn_id":"turn-failed","item":{"type":"user_message","id":"u2","content":[{"type":"text","text":"again"}]}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:06.000Z","type":"turn_ended","payload":{"turn_id":"turn-failed","status":"failed","error":{"details":null,"kind":{"http_connection_failed":{"status":502}},"message":"bad gateway"},"completed_at":1767225606}}"#,
        r#"{"timestamp":"2026-01-01T00:00:07.000Z","type":"turn_started","payload":{"turn_id":"turn-cut","started_at":1767225607}}"#,
        r#"{"timestamp":"2026-01-01T00:00:07.100Z","type":"turn_item","payload":{"turn_id":"turn-cut","item":{"type":"user_message","id":"u3","content":[{"type":"text","text":"long task"}]}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:08.000Z","type":"turn_item","payload":{"turn_id":"turn-cut","item":{"type":"agent_message","id":"m3","text":"working"}}}"#,
    ];
    lines.iter().map(|line| line.to_string()).collect()
}

/// Invariant: a rollout an earlier version wrote reads as it did — a turn end without a
/// recorded duration reports the whole seconds between start and end, a stored error is the
/// turn's error, a turn with no end was cut short — and a fork of it ends the cut turn with core's
/// record (interrupted, the user's message kept).
#[tokio::test]
async fn a_rollout_written_by_an_earlier_version_reads_as_it_did() {
    let home = tempfile::tempdir().unwrap();
    let created = chrono::DateTime::from_timestamp(1_767_225_600, 0).unwrap();
    let path = openturn::rollout::paths::rollout_path(home.path(), OLD_THREAD_ID, created);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, old_rollout_lines().join("\n") + "\n").unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let turns = read_turns(&mut daemon, OLD_THREAD_ID).await;
    let turns = turns.as_array().unwrap();
    assert_eq!(turns.len(), 3, "{turns:#?}");
    let read: Vec<Value> = turns.iter().map(facts).collect();
    assert_eq!(
        read,
        vec![
            json!({"id": "turn-done", "rootTurnId": "turn-done", "status": "completed",
                   "error": null, "startedAt": 1_767_225_601, "completedAt": 1_767_225_604,
                   "durationMs": 3000}),
            json!({"id": "turn-failed", "rootTurnId": "turn-failed", "status": "failed",
                   "error": {"message": "bad gateway", "additionalDetails": null,
                             "misalignment": null,
                             "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 502}}},
                   "startedAt": 1_767_225_605, "completedAt": 1_767_225_606,
                   "durationMs": 1000}),
            json!({"id": "turn-cut", "rootTurnId": "turn-cut", "status": "interrupted",
                   "error": null, "startedAt": 1_767_225_607, "completedAt": null,
                   "durationMs": null}),
        ]
    );
    let texts: &Vec<Value> = turns[0]["items"].as_array().unwrap();
    assert_eq!(texts[0]["type"], "userMessage");
    assert_eq!(texts[1]["type"], "agentMessage");
    assert_eq!(texts[1]["text"], "hi there");
    // Item lines written before items stored their times read with their line's write time
    // for both ends.
    for (item, written) in texts.iter().zip([1_767_225_601_100_i64, 1_767_225_603_200]) {
        assert_eq!(item["startedAtMs"], written, "{item}");
        assert_eq!(item["completedAtMs"], written, "{item}");
    }
    assert_eq!(turns[2]["items"].as_array().map(Vec::len), Some(2));

    let forked = daemon
        .ok("thread/fork", json!({"threadId": OLD_THREAD_ID}))
        .await;
    let forked_turns = forked["thread"]["turns"].as_array().unwrap();
    assert_eq!(forked_turns.len(), 3);
    assert_eq!(facts(&forked_turns[0]), facts(&turns[0]));
    assert_eq!(facts(&forked_turns[1]), facts(&turns[1]));
    let cut = &forked_turns[2];
    assert_eq!(cut["status"], "interrupted");
    assert!(cut["completedAt"].is_i64(), "the fork ended it: {cut}");
    let kept: Vec<&Value> = cut["items"].as_array().unwrap().iter().collect();
    assert_eq!(kept.len(), 1, "only the user's message is kept: {kept:#?}");
    assert_eq!(kept[0]["id"], "u3");
}
