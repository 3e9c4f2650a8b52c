//! Framing and per-connection options: stdout carries protocol lines only, U+2028/U+2029 inside
//! strings are written escaped, `initialize` advertises the protocol version, and
//! `optOutNotificationMethods` silences exactly the named notifications.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Stdio;

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test]
async fn line_separators_are_escaped_and_every_stdout_line_is_json() {
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(openturn_bin())
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let requests = [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"id": 2, "method": "thread/start", "params": {"ephemeral": true}}),
    ];
    for request in &requests {
        let mut line = serde_json::to_vec(request).unwrap_or_default();
        line.push(b'\n');
        stdin.write_all(&line).await.unwrap();
    }
    let mut lines = BufReader::new(stdout).split(b'\n');
    let mut raw = Vec::new();
    let mut thread_id = String::new();
    while thread_id.is_empty() {
        let line = tokio::time::timeout(TIMEOUT, lines.next_segment())
            .await
            .expect("timeout")
            .unwrap()
            .expect("stdout closed");
        let value: Value = serde_json::from_slice(&line).expect("not JSON");
        if value["id"] == 1 {
            assert!(value["result"]["protocolVersion"].is_string(), "{value}");
        }
        if value["id"] == 2 {
            thread_id = value["result"]["thread"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
    }
    let name = json!({"id": 3, "method": "thread/name/set",
        "params": {"threadId": thread_id, "name": "a\u{2028}b\u{2029}c"}});
    let mut line = serde_json::to_vec(&name).unwrap_or_default();
    line.push(b'\n');
    stdin.write_all(&line).await.unwrap();
    loop {
        let line = tokio::time::timeout(TIMEOUT, lines.next_segment())
            .await
            .expect("timeout")
            .unwrap()
            .expect("stdout closed");
        let value: Value = serde_json::from_slice(&line).expect("not JSON");
        raw.extend_from_slice(&line);
        if value["method"] == "thread/name/updated" {
            assert_eq!(value["params"]["threadName"], "a\u{2028}b\u{2029}c");
            break;
        }
    }
    let text = String::from_utf8_lossy(&raw);
    assert!(text.contains("a\\u2028b\\u2029c"), "{text}");
    assert!(!text.contains('\u{2028}') && !text.contains('\u{2029}'));
}

#[tokio::test]
async fn opted_out_notifications_are_not_sent_to_that_connection() {
    let provider = MockProvider::start(Script::new([text_reply(0, "quiet answer")]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon
        .ok(
            "initialize",
            json!({"clientInfo": {"name": "t", "version": "1"},
                   "capabilities": {"optOutNotificationMethods": ["thread/started", "item/agentMessage/delta"]}}),
        )
        .await;
    let id = daemon.start_thread(json!({})).await;
    let messages = text_turn(&mut daemon, &id, "hi").await;
    let seen = methods(&messages);
    assert!(!seen.contains(&"thread/started".to_string()), "{seen:?}");
    assert!(
        !seen.contains(&"item/agentMessage/delta".to_string()),
        "{seen:?}"
    );
    assert!(seen.contains(&"item/completed".to_string()));
}
