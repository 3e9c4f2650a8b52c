//! Edits of a thread's history through the real binary: `thread/revert` (the next request no
//! longer carries the dropped turns, `thread/read` and a restarted daemon agree, refused while a
//! turn runs), `thread/inject_items` (the next request carries the items, also after a
//! restart; malformed items refused naming the item and field, nothing appended) and
//! `thread/metadata/update` (persisted for loaded and stored threads). Other threads'
//! rollouts are never touched.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// Runs one text turn and returns its id.
async fn turn(daemon: &mut Daemon, thread_id: &str, text: &str) -> String {
    let started = daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]}),
        )
        .await;
    daemon.until_turn_completed().await;
    started["turn"]["id"].as_str().unwrap().to_string()
}

/// The `n`th request's `input`, as text to search.
fn input_text(provider: &MockProvider, n: usize) -> String {
    serde_json::to_string(&request_input(provider, n)).unwrap()
}

async fn turn_ids(daemon: &mut Daemon, thread_id: &str) -> Vec<String> {
    let read = daemon
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    read["thread"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn revert_drops_turns_from_the_next_request_and_a_restart_agrees() {
    let provider = provider(vec![
        text_reply(0, "other-answer"),
        text_reply(1, "ALPHA-answer"),
        text_reply(2, "BRAVO-answer"),
        text_reply(3, "CHARLIE-answer"),
        text_reply(4, "DELTA-answer"),
        stalled_text_reply("msg_slow", &["still going"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let other = daemon.start_thread(json!({})).await;
    turn(&mut daemon, &other, "other-question").await;
    let other_file = rollout_of(home.path(), &other);
    let other_bytes = std::fs::read(&other_file).unwrap();

    let thread = daemon.start_thread(json!({})).await;
    let alpha = turn(&mut daemon, &thread, "ALPHA-question").await;
    let bravo = turn(&mut daemon, &thread, "BRAVO-question").await;
    assert!(input_text(&provider, 2).contains("ALPHA-answer"));

    let reverted = daemon
        .ok(
            "thread/revert",
            json!({"threadId": thread, "beforeTurnId": bravo}),
        )
        .await;
    assert_eq!(reverted["thread"]["id"], thread.as_str());
    assert_eq!(reverted["thread"]["turns"], json!([]));
    assert_eq!(
        reverted["turnsBackwardsCursor"],
        json!(format!("at:{alpha}"))
    );
    let notice = daemon.notification("thread/reverted").await;
    assert_eq!(notice["params"]["threadId"], thread.as_str());
    assert_eq!(
        turn_ids(&mut daemon, &thread).await,
        std::slice::from_ref(&alpha)
    );

    // The next request carries the kept turn and not the dropped one.
    let charlie = turn(&mut daemon, &thread, "CHARLIE-question").await;
    let sent = input_text(&provider, 3);
    assert!(
        sent.contains("ALPHA-question") && sent.contains("ALPHA-answer"),
        "{sent}"
    );
    assert!(!sent.contains("BRAVO"), "{sent}");
    assert!(sent.contains("CHARLIE-question"), "{sent}");
    assert_eq!(
        turn_ids(&mut daemon, &thread).await,
        [alpha.clone(), charlie.clone()]
    );

    // A dropped turn cannot be reverted to again; an unknown thread is not loaded.
    let gone = daemon
        .err(
            "thread/revert",
            json!({"threadId": thread, "beforeTurnId": bravo}),
        )
        .await;
    assert!(gone["message"].as_str().unwrap().contains(&bravo), "{gone}");
    let unknown = "00000000-0000-7000-8000-000000000001";
    let missing = daemon
        .err(
            "thread/revert",
            json!({"threadId": unknown, "beforeTurnId": alpha}),
        )
        .await;
    assert_eq!(missing["code"], -32600, "{missing}");
    assert!(missing["message"].as_str().unwrap().contains(unknown));
    daemon.exit_cleanly().await;
    assert_eq!(std::fs::read(&other_file).unwrap(), other_bytes);

    // A restarted daemon reads and sends the same history.
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    assert_eq!(
        turn_ids(&mut daemon, &thread).await,
        [alpha.clone(), charlie.clone()]
    );
    daemon
        .ok("thread/resume", json!({"threadId": thread}))
        .await;
    turn(&mut daemon, &thread, "DELTA-question").await;
    let sent = input_text(&provider, 4);
    assert!(
        sent.contains("ALPHA-answer") && sent.contains("CHARLIE-answer"),
        "{sent}"
    );
    assert!(!sent.contains("BRAVO"), "{sent}");

    // A running turn refuses the revert and loses nothing.
    let started = daemon
        .ok(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": "slow"}]}),
        )
        .await;
    daemon.notification("item/agentMessage/delta").await;
    let refused = daemon
        .err(
            "thread/revert",
            json!({"threadId": thread, "beforeTurnId": charlie}),
        )
        .await;
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("running turn")),
        "{refused}"
    );
    daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": started["turn"]["id"]}),
        )
        .await;
    daemon.until_turn_completed().await;
    assert_eq!(turn_ids(&mut daemon, &thread).await.len(), 4);
    daemon.exit_cleanly().await;
    assert_eq!(std::fs::read(&other_file).unwrap(), other_bytes);
}

fn message(role: &str, text: &str) -> Value {
    let part = if role == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    json!({"type": "message", "role": role, "content": [{"type": part, "text": text}]})
}

#[tokio::test]
async fn injected_items_reach_the_next_request_and_survive_a_restart() {
    let provider = provider(vec![
        text_reply(0, "other-answer"),
        text_reply(1, "ALPHA-answer"),
        text_reply(2, "BRAVO-answer"),
        text_reply(3, "CHARLIE-answer"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let other = daemon.start_thread(json!({})).await;
    turn(&mut daemon, &other, "other-question").await;
    let other_file = rollout_of(home.path(), &other);
    let other_bytes = std::fs::read(&other_file).unwrap();

    let thread = daemon.start_thread(json!({})).await;
    turn(&mut daemon, &thread, "ALPHA-question").await;

    // A malformed item refuses the whole call, naming it; nothing of it is appended.
    let refused = daemon
        .err(
            "thread/inject_items",
            json!({"threadId": thread, "items": [
                message("user", "REFUSED-note"),
                {"type": "message", "role": "user", "content": [{"type": "input_text"}]},
            ]}),
        )
        .await;
    assert_eq!(refused["code"], -32602, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("items[1].content[0].text"),
        "{refused}"
    );
    let garbage = daemon
        .err(
            "thread/inject_items",
            json!({"threadId": thread, "items": [{"type": "garbage"}]}),
        )
        .await;
    assert_eq!(garbage["code"], -32602, "{garbage}");
    assert!(garbage["message"]
        .as_str()
        .unwrap()
        .contains("items[0].type"));
    let unknown = "00000000-0000-7000-8000-000000000001";
    let missing = daemon
        .err(
            "thread/inject_items",
            json!({"threadId": unknown, "items": [message("user", "x")]}),
        )
        .await;
    assert!(missing["message"].as_str().unwrap().contains(unknown));

    let injected = daemon
        .ok(
            "thread/inject_items",
            json!({"threadId": thread, "items": [
                message("developer", "INJECTED-developer-note"),
                message("assistant", "INJECTED-assistant-note"),
            ]}),
        )
        .await;
    assert_eq!(injected, json!({}));
    turn(&mut daemon, &thread, "BRAVO-question").await;
    let sent = input_text(&provider, 2);
    let answer = sent.find("ALPHA-answer").unwrap();
    let developer = sent.find("INJECTED-developer-note").expect(&sent);
    let assistant = sent.find("INJECTED-assistant-note").expect(&sent);
    let question = sent.find("BRAVO-question").unwrap();
    assert!(
        answer < developer && developer < assistant && assistant < question,
        "{sent}"
    );
    assert!(!sent.contains("REFUSED"), "{sent}");
    daemon.exit_cleanly().await;

    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    daemon
        .ok("thread/resume", json!({"threadId": thread}))
        .await;
    turn(&mut daemon, &thread, "CHARLIE-question").await;
    let sent = input_text(&provider, 3);
    assert!(sent.contains("INJECTED-developer-note"), "{sent}");
    assert!(sent.contains("INJECTED-assistant-note"), "{sent}");
    assert!(sent.contains("BRAVO-answer"), "{sent}");
    daemon.exit_cleanly().await;
    assert_eq!(std::fs::read(&other_file).unwrap(), other_bytes);
}

#[tokio::test]
async fn metadata_updates_are_persisted_for_loaded_and_stored_threads() {
    let provider = provider(vec![
        text_reply(0, "other-answer"),
        text_reply(1, "ALPHA-answer"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let other = daemon.start_thread(json!({})).await;
    turn(&mut daemon, &other, "other-question").await;
    let other_file = rollout_of(home.path(), &other);
    let other_bytes = std::fs::read(&other_file).unwrap();
    let thread = daemon.start_thread(json!({})).await;
    turn(&mut daemon, &thread, "ALPHA-question").await;

    let updated = daemon
        .ok(
            "thread/metadata/update",
            json!({"threadId": thread, "gitInfo": {"branch": "main", "sha": "abc123"},
                   "daybreakEnabled": true}),
        )
        .await;
    assert_eq!(updated["thread"]["id"], thread.as_str());
    assert_eq!(
        updated["thread"]["gitInfo"],
        json!({"branch": "main", "originUrl": null, "sha": "abc123"})
    );
    assert_eq!(updated["thread"]["daybreakEnabled"], true);
    // `null` clears one field and leaves the others.
    let cleared = daemon
        .ok(
            "thread/metadata/update",
            json!({"threadId": thread, "gitInfo": {"branch": null}}),
        )
        .await;
    assert_eq!(
        cleared["thread"]["gitInfo"],
        json!({"branch": null, "originUrl": null, "sha": "abc123"})
    );

    for (params, text) in [
        (
            json!({"threadId": thread}),
            "must include at least one field",
        ),
        (
            json!({"threadId": thread, "gitInfo": {"branch": ""}}),
            "gitInfo.branch must not be empty",
        ),
        (
            json!({"threadId": thread, "projectId": "p1"}),
            "project not found: p1",
        ),
        (
            json!({"threadId": "00000000-0000-7000-8000-000000000001", "daybreakEnabled": true}),
            "no rollout found for thread id 00000000-0000-7000-8000-000000000001",
        ),
    ] {
        let refused = daemon.err("thread/metadata/update", params).await;
        assert_eq!(refused["code"], -32600, "{refused}");
        assert!(
            refused["message"].as_str().unwrap().contains(text),
            "{refused}"
        );
    }
    daemon.exit_cleanly().await;

    // A restarted daemon reads the metadata back, and updates a thread it has not loaded.
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let read = daemon.ok("thread/read", json!({"threadId": thread})).await;
    assert_eq!(
        read["thread"]["gitInfo"],
        json!({"branch": null, "originUrl": null, "sha": "abc123"})
    );
    assert_eq!(read["thread"]["daybreakEnabled"], true);
    daemon
        .ok(
            "thread/metadata/update",
            json!({"threadId": thread, "gitInfo": {"originUrl": "https://git.invalid/r.git"}}),
        )
        .await;
    let listed = daemon.ok("thread/list", json!({})).await;
    let entry = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == thread.as_str())
        .cloned()
        .unwrap();
    assert_eq!(
        entry["gitInfo"],
        json!({"branch": null, "originUrl": "https://git.invalid/r.git", "sha": "abc123"})
    );
    let other_read = daemon.ok("thread/read", json!({"threadId": other})).await;
    assert_eq!(other_read["thread"]["gitInfo"], Value::Null);
    daemon.exit_cleanly().await;
    assert_eq!(std::fs::read(&other_file).unwrap(), other_bytes);
}
