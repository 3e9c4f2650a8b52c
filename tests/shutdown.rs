//! Shutdown (docs/ARCHITECTURE.md §4): stdin EOF or SIGTERM mid-turn interrupts the turn, records that in
//! the rollout, flushes, and exits 0 within the shutdown budget; a closed stdout (EPIPE) ends the
//! daemon cleanly, without a panic.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use support::*;

/// Generous bound on a shutdown the daemon budgets at under two seconds: a hang fails the test,
/// scheduling noise on a loaded machine does not.
const EXIT_BOUND: Duration = Duration::from_secs(8);

async fn daemon_mid_turn() -> (Daemon, tempfile::TempDir, MockProvider, String) {
    let provider =
        MockProvider::start(Script::new([stalled_text_reply("msg_p", &["par", "tial"])]))
            .await
            .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({})).await;
    daemon
        .ok(
            "turn/start",
            json!({"threadId": id, "input": [{"type": "text", "text": "go"}]}),
        )
        .await;
    daemon.notification("item/agentMessage/delta").await;
    (daemon, home, provider, id)
}

async fn assert_recorded_interrupted(daemon: &mut Daemon, home: &std::path::Path, id: &str) {
    let status = tokio::time::timeout(EXIT_BOUND, daemon.child.wait())
        .await
        .unwrap_or_else(|_| panic!("daemon did not exit within {EXIT_BOUND:?}"))
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let rollout = std::fs::read_to_string(rollout_of(home, id)).unwrap();
    let last: serde_json::Value = rollout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_default();
    assert_eq!(last["type"], "turn_ended", "{rollout}");
    assert_eq!(last["payload"]["status"], "interrupted");
    assert!(!daemon.stderr().iter().any(|l| l.contains("panicked")));
}

#[tokio::test]
async fn stdin_eof_mid_turn_interrupts_records_and_exits_zero() {
    let (mut daemon, home, _provider, id) = daemon_mid_turn().await;
    daemon.close_stdin();
    let rest = daemon.until_turn_completed().await;
    let completed = rest.last().cloned().unwrap_or_default();
    assert_eq!(completed["params"]["turn"]["status"], "interrupted");
    assert_recorded_interrupted(&mut daemon, home.path(), &id).await;
    assert!(
        daemon.stderr().iter().any(|l| l.contains("StdinEof")),
        "the EOF reason is logged: {:?}",
        daemon.stderr()
    );
}

#[tokio::test]
async fn sigterm_mid_turn_interrupts_records_and_exits_zero() {
    let (mut daemon, home, _provider, id) = daemon_mid_turn().await;
    daemon.terminate();
    let rest = daemon.until_turn_completed().await;
    assert_eq!(
        rest.last().cloned().unwrap_or_default()["params"]["turn"]["status"],
        "interrupted"
    );
    assert_recorded_interrupted(&mut daemon, home.path(), &id).await;
    assert!(daemon.stderr().iter().any(|l| l.contains("SIGTERM")));
}

#[tokio::test]
async fn a_closed_stdout_ends_the_daemon_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(openturn_bin())
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // The client stops listening.
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stderr = child.stderr.take().expect("stderr");
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let init = b"{\"id\":1,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n";
    let _ = stdin.write_all(init).await;
    // Keep writing requests; each answer hits the closed pipe.
    for id in 2..50 {
        let line = format!("{{\"id\":{id},\"method\":\"thread/loaded/list\"}}\n");
        if stdin.write_all(line.as_bytes()).await.is_err() {
            break;
        }
    }
    let status = tokio::time::timeout(EXIT_BOUND, child.wait())
        .await
        .expect("daemon ignored EPIPE")
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let mut log = String::new();
    let _ = stderr.read_to_string(&mut log).await;
    assert!(!log.contains("panicked"), "{log}");
    assert!(log.contains("OutputClosed"), "{log}");
}
