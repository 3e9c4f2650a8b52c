//! Backpressure: a client that stops reading stdout loses nothing. The turn pauses once the
//! bounded outbound queue and the pipe are full; when the client reads again, every delta has
//! arrived, in order, followed by the turn's end.

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const DELTAS: usize = 5000;

#[tokio::test]
async fn a_client_that_stops_reading_gets_every_delta_in_order_afterwards() {
    let pieces: Vec<String> = (0..DELTAS).map(|i| format!("{i},")).collect();
    let piece_refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let reply = mock_provider::ResponseBuilder::new("resp_big")
        .created()
        .text_message("msg_big", &piece_refs)
        .completed(mock_provider::Usage::example(), None)
        .into_reply();
    let provider = MockProvider::start(Script::new([Reply::Sse(reply)]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut command = tokio::process::Command::new(openturn_bin());
    for o in mock_overrides(&provider) {
        command.arg("-c").arg(o);
    }
    let mut child = command
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", "sk-test")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut lines = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout"))).lines();
    for request in [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}),
        json!({"id": 2, "method": "thread/start", "params": {"ephemeral": true}}),
    ] {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let mut thread_id = String::new();
    while thread_id.is_empty() {
        let message = next(&mut lines).await;
        if message["id"] == 2 {
            thread_id = message["result"]["thread"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
    }
    let turn = json!({"id": 3, "method": "turn/start",
        "params": {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}});
    stdin
        .write_all(format!("{turn}\n").as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Stop reading while the whole response streams in (far more than the pipe and queue hold).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut text = String::new();
    let mut deltas = 0;
    loop {
        let message = next(&mut lines).await;
        match message["method"].as_str() {
            Some("item/agentMessage/delta") => {
                deltas += 1;
                text.push_str(message["params"]["delta"].as_str().unwrap_or_default());
            }
            Some("turn/completed") => {
                assert_eq!(message["params"]["turn"]["status"], "completed");
                break;
            }
            _ => {}
        }
    }
    assert!(deltas >= 1);
    assert_eq!(text, pieces.concat(), "deltas lost or reordered");
}

async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(TIMEOUT, lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("timeout"))
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("stdout closed"));
    serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}"))
}
