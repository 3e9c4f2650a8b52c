//! Rollouts survive the daemon: after a clean exit or a `kill -9` mid-turn, a new daemon on the
//! same home resumes the thread, `thread/read` returns what it returned before, the next request
//! carries the same history, a torn last line is skipped, unknown line types are ignored, a
//! corrupt line fails only its own thread, and `thread/fork` copies history.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::io::Write;

use serde_json::{json, Value};
use support::*;

async fn read_turns(daemon: &mut Daemon, thread_id: &str) -> Value {
    daemon
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await
}

#[tokio::test]
async fn resume_after_restart_reads_the_same_and_sends_the_same_history() {
    let home = tempfile::tempdir().unwrap();
    let first_provider = provider(vec![
        text_reply(0, "First answer"),
        text_reply(1, "Second answer"),
    ])
    .await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_provider));
    first.initialize().await;
    let id = first.start_thread(json!({})).await;
    text_turn(&mut first, &id, "q0").await;
    text_turn(&mut first, &id, "q1").await;
    first
        .ok("thread/name/set", json!({"threadId": id, "name": "kept"}))
        .await;
    let before = read_turns(&mut first, &id).await;
    first.exit_cleanly().await;

    let second_provider = provider(vec![text_reply(2, "Third answer")]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    let not_loaded = read_turns(&mut second, &id).await;
    assert_eq!(not_loaded["thread"]["status"]["type"], "notLoaded");
    let resume_id = second
        .send_request("thread/resume", json!({"threadId": id}))
        .await;
    let status = second.notification("thread/status/changed").await;
    assert_eq!(
        status["params"],
        json!({"threadId": id, "status": {"type": "idle"}})
    );
    let resumed = second.response_to(resume_id).await;
    assert_eq!(
        resumed["result"]["thread"]["turns"],
        before["thread"]["turns"]
    );
    assert_eq!(resumed["result"]["thread"]["name"], "kept");
    let after = read_turns(&mut second, &id).await;
    assert_eq!(after, before);

    text_turn(&mut second, &id, "q2").await;
    let earlier = request_input(&first_provider, 1);
    let now = request_input(&second_provider, 0);
    assert_eq!(now.len(), earlier.len() + 2, "{now:#?}");
    assert_eq!(now[..earlier.len()], earlier[..]);
    assert_eq!(now[earlier.len()]["role"], "assistant");
    assert_eq!(now[earlier.len()]["content"][0]["text"], "Second answer");
    assert_eq!(now[earlier.len() + 1]["content"][0]["text"], "q2");
}

#[tokio::test]
async fn kill_nine_mid_turn_then_restart_keeps_everything_committed_and_skips_the_torn_line() {
    let home = tempfile::tempdir().unwrap();
    let first_provider = provider(vec![
        text_reply(0, "Committed answer"),
        stalled_text_reply("msg_partial", &["never ", "finished"]),
    ])
    .await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_provider));
    first.initialize().await;
    let id = first.start_thread(json!({})).await;
    text_turn(&mut first, &id, "q0").await;
    first
        .ok(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "q1"}]}),
        )
        .await;
    first.notification("item/agentMessage/delta").await;
    first.kill9().await;
    // A crash in the middle of a write leaves a line without its newline.
    let path = rollout_of(home.path(), &id);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"timestamp":"2026-01-01T00:00:00Z","type":"turn_it"#)
        .unwrap();
    drop(file);

    let second_provider = provider(vec![text_reply(2, "After the crash")]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    let read = read_turns(&mut second, &id).await;
    let turns = read["thread"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["status"], "completed");
    assert_eq!(turns[0]["items"][1]["text"], "Committed answer");
    assert_eq!(turns[1]["status"], "interrupted");
    assert_eq!(
        turns[1]["items"].as_array().map(Vec::len),
        Some(1),
        "{turns:#?}"
    );
    assert_eq!(turns[1]["items"][0]["content"][0]["text"], "q1");
    assert!(
        second.stderr().iter().any(|l| l.contains("torn")),
        "{:?}",
        second.stderr()
    );

    second.ok("thread/resume", json!({"threadId": id})).await;
    let warning = second.notification("warning").await;
    assert_eq!(warning["params"]["threadId"], id.as_str());
    assert!(warning["params"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("torn")));
    text_turn(&mut second, &id, "q2").await;
    let input = request_input(&second_provider, 0);
    let texts: Vec<&str> = input
        .iter()
        .filter_map(|item| item["content"][0]["text"].as_str())
        .collect();
    // The environment context recorded by the first turn comes first.
    assert!(texts[0].starts_with("<environment_context>"), "{texts:?}");
    assert_eq!(texts[1..], ["q0", "Committed answer", "q1", "q2"]);
    // The torn fragment was cut before appending: the file reads cleanly to its end.
    let again = read_turns(&mut second, &id).await;
    assert_eq!(again["thread"]["turns"].as_array().map(Vec::len), Some(3));
    let bytes = std::fs::read(&path).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("turn_it\"{"));
}

#[tokio::test]
async fn a_corrupt_line_fails_only_its_thread_the_same_way_for_read_and_resume_and_unknown_lines_are_skipped(
) {
    let home = tempfile::tempdir().unwrap();
    let first_provider = provider(vec![text_reply(0, "A"), text_reply(1, "B")]).await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_provider));
    first.initialize().await;
    let broken = first.start_thread(json!({})).await;
    text_turn(&mut first, &broken, "qa").await;
    let healthy = first.start_thread(json!({})).await;
    text_turn(&mut first, &healthy, "qb").await;
    first.exit_cleanly().await;

    let broken_path = rollout_of(home.path(), &broken);
    let text = std::fs::read_to_string(&broken_path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = "{this is not json".to_string();
    std::fs::write(&broken_path, lines.join("\n") + "\n").unwrap();
    let healthy_path = rollout_of(home.path(), &healthy);
    let text = std::fs::read_to_string(&healthy_path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(
        1,
        r#"{"timestamp":"2030-01-01T00:00:00Z","type":"from_the_future","payload":{"x":1}}"#,
    );
    std::fs::write(&healthy_path, lines.join("\n") + "\n").unwrap();

    let second_provider = provider(Vec::new()).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    let error = second
        .err(
            "thread/read",
            json!({"threadId": broken, "includeTurns": true}),
        )
        .await;
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&broken_path.display().to_string()),
        "{message}"
    );
    assert!(message.contains("line 3"), "{message}");
    assert_eq!(error["data"]["line"], 3);
    // Resume reports the corrupt line exactly as read does: same code, message and data.
    let resume = second
        .err("thread/resume", json!({"threadId": broken}))
        .await;
    assert_eq!(resume, error);
    assert_eq!(error["data"]["reason"], "corrupt_rollout");
    assert_eq!(
        error["data"]["path"],
        json!(broken_path.display().to_string())
    );

    let fine = read_turns(&mut second, &healthy).await;
    assert_eq!(fine["thread"]["turns"][0]["items"][1]["text"], "B");
    second
        .ok("thread/resume", json!({"threadId": healthy}))
        .await;
    let list = second.ok("thread/list", json!({})).await;
    assert!(list["data"].to_string().contains(&healthy));
}

#[tokio::test]
async fn fork_copies_history_and_records_a_running_turn_as_interrupted() {
    let home = tempfile::tempdir().unwrap();
    let provider = provider(vec![
        text_reply(0, "Base answer"),
        stalled_text_reply("msg_partial", &["half"]),
        text_reply(2, "Fork answer"),
    ])
    .await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let source = daemon.start_thread(json!({})).await;
    daemon.notification("thread/started").await;
    text_turn(&mut daemon, &source, "q0").await;
    let first_turn = read_turns(&mut daemon, &source).await["thread"]["turns"][0]["id"].clone();
    daemon
        .ok(
            "turn/start",
            json!({"threadId": source, "input": [{"type": "text", "text": "q1"}]}),
        )
        .await;
    daemon.notification("item/agentMessage/delta").await;

    let fork_id = daemon
        .send_request("thread/fork", json!({"threadId": source}))
        .await;
    let forked = daemon.response_to(fork_id).await["result"].clone();
    let started = daemon.notification("thread/started").await;
    let fork = forked["thread"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(started["params"]["thread"]["id"], fork.as_str());
    assert_ne!(fork, source);
    assert_eq!(forked["thread"]["forkedFromId"], source.as_str());
    let turns = forked["thread"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["status"], "completed");
    assert_eq!(turns[1]["status"], "interrupted");
    assert_eq!(turns[1]["items"].as_array().map(Vec::len), Some(1));

    text_turn(&mut daemon, &fork, "q2").await;
    let input = request_input(&provider, 2);
    let texts: Vec<&str> = input
        .iter()
        .filter_map(|item| item["content"][0]["text"].as_str())
        .collect();
    // The environment context recorded by the base thread's first turn comes first.
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert!(texts[0].starts_with("<environment_context>"));
    assert_eq!(texts[1..4], ["q0", "Base answer", "q1"]);
    assert!(texts[4].starts_with("<turn_aborted>"));
    assert_eq!(texts[5], "q2");

    let partial = daemon
        .ok(
            "thread/fork",
            json!({"threadId": source, "lastTurnId": first_turn}),
        )
        .await;
    assert_eq!(partial["thread"]["turns"].as_array().map(Vec::len), Some(1));
    let unknown = daemon
        .err(
            "thread/fork",
            json!({"threadId": source, "lastTurnId": "nope"}),
        )
        .await;
    assert!(unknown["message"]
        .as_str()
        .is_some_and(|m| m.contains("nope")));
}
