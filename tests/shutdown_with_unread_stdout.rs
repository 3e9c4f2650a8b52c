//! Shutdown does not wait on a stuck client before ending turns: when the client stopped reading
//! stdout (so the dispatcher is blocked on a response), stdin EOF still interrupts the running
//! turn, records it as interrupted in the fsynced rollout, and exits 0.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use support::raw_pipes::{pipe_bytes, response, send, start_thread, PIPE_FULL};
use support::*;
use tokio::io::BufReader;
use tokio::process::Command;

/// Generous bound on a shutdown budgeted at under two seconds plus the writer's grace.
const EXIT_BOUND: Duration = Duration::from_secs(10);
/// Deltas the stalled turn streams before it stalls: more than the outbound queue and the pipe
/// hold, so the daemon's output is stuck once stdout goes unread.
const DELTAS: usize = 5_000;

#[tokio::test]
async fn eof_with_unread_stdout_still_records_the_turn_interrupted_and_exits_zero() {
    let deltas: Vec<String> = (0..DELTAS).map(|n| format!("delta {n} ")).collect();
    let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
    let provider = MockProvider::start(Script::new([stalled_text_reply("msg_p", &deltas)]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(openturn_bin())
        .args(
            mock_overrides(&provider)
                .iter()
                .flat_map(|o| ["-c", o.as_str()]),
        )
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let id = start_thread(&mut stdin, &mut stdout, json!({})).await;
    let turn = json!({"id": 3, "method": "turn/start",
        "params": {"threadId": id, "input": [{"type": "text", "text": "go"}]}});
    send(&mut stdin, turn).await;
    response(&mut stdout, 3).await;
    // From here on stdout is never read again (but stays open).
    // Wait until the pipe is full, so the daemon's writer is blocked; then give the deltas
    // still streaming a moment to fill the outbound queue behind it.
    let deadline = std::time::Instant::now() + TIMEOUT;
    while pipe_bytes(stdout.get_ref()) < PIPE_FULL {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon never filled its stdout pipe: {} bytes, {} requests",
            pipe_bytes(stdout.get_ref()),
            provider.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Pacing, not a wait for correctness: the test passes whether or not the queue behind the
    // pipe is full by now; the moment only makes the stuck dispatcher it is about likely.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // An ordered request whose answer cannot be written: the dispatcher is stuck on it.
    let request = json!({"id": 4, "method": "thread/start", "params": {"ephemeral": true}});
    send(&mut stdin, request).await;
    drop(stdin);
    let status = tokio::time::timeout(EXIT_BOUND, child.wait())
        .await
        .unwrap_or_else(|_| panic!("daemon did not exit within {EXIT_BOUND:?}"))
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_one_turn_recorded_interrupted(home.path(), &id);
    drop(stdout);
}
