//! `app-server daemon start|stop|version` and `app-server proxy` (docs/REMOTE.md): a background
//! daemon on the default socket, started once however often `start` runs, reached by a stdio
//! client through the proxy, and stopped with its socket removed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Stdio;

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn control(home: &std::path::Path, overrides: &[String], args: &[&str]) -> (bool, Value, String) {
    let mut command = std::process::Command::new(openturn_bin());
    for o in overrides {
        command.arg("-c").arg(o);
    }
    let output = command
        .arg("app-server")
        .args(args)
        .env("OPENTURN_HOME", home)
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        output.status.success(),
        value,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(TIMEOUT, lines.next_line())
        .await
        .expect("a line through the proxy")
        .unwrap()
        .expect("the proxy is still open");
    serde_json::from_str(&line).unwrap()
}

/// Kills the background daemon if the test ends early, so nothing outlives it.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if !process_is_dead(&self.0.to_string()) {
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}

// Multi-threaded: the test waits on child processes synchronously while the mock provider
// serves them from this runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_start_is_idempotent_the_proxy_reaches_it_and_stop_removes_its_socket() {
    let provider = provider(vec![text_reply(1, "hello from the daemon")]).await;
    let overrides = mock_overrides(&provider);
    let home = tempfile::tempdir().unwrap();
    let (ok, not_running, _) = control(home.path(), &overrides, &["daemon", "version"]);
    assert!(!ok && not_running.is_null());
    let (ok, started, stderr) = control(home.path(), &overrides, &["daemon", "start"]);
    assert!(ok, "{stderr}");
    assert_eq!(started["status"], "started");
    let pid = started["pid"].as_i64().unwrap();
    let _stop_on_failure = KillOnDrop(pid as i32);
    let socket = std::path::PathBuf::from(started["socketPath"].as_str().unwrap());
    assert!(socket.exists());
    let (ok, again, _) = control(home.path(), &overrides, &["daemon", "start"]);
    assert!(ok);
    assert_eq!(again["status"], "alreadyRunning");
    assert_eq!(again["pid"], pid);
    let (ok, version, _) = control(home.path(), &overrides, &["daemon", "version"]);
    assert!(ok);
    assert_eq!(version["appServerVersion"], env!("CARGO_PKG_VERSION"));

    // A stdio client through the proxy runs a turn on the daemon.
    let mut proxy = tokio::process::Command::new(openturn_bin())
        .args(["app-server", "proxy"])
        .env("OPENTURN_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut lines = BufReader::new(proxy.stdout.take().unwrap()).lines();
    let requests = [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "proxy-test", "version": "1"}}}),
        json!({"method": "initialized"}),
        json!({"id": 2, "method": "thread/start", "params": {}}),
    ];
    for request in requests {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
    }
    let thread_id = loop {
        let message = next(&mut lines).await;
        if message["id"] == 2 {
            break message["result"]["thread"]["id"]
                .as_str()
                .unwrap()
                .to_string();
        }
    };
    let turn = json!({"id": 3, "method": "turn/start",
        "params": {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}});
    stdin
        .write_all(format!("{turn}\n").as_bytes())
        .await
        .unwrap();
    let mut text = String::new();
    loop {
        let message = next(&mut lines).await;
        if message["method"] == "item/agentMessage/delta" {
            text.push_str(message["params"]["delta"].as_str().unwrap());
        }
        if message["method"] == "turn/completed" {
            break;
        }
    }
    assert_eq!(text, "hello from the daemon");
    drop(stdin);
    assert!(tokio::time::timeout(TIMEOUT, proxy.wait()).await.is_ok());

    let (ok, stopped, _) = control(home.path(), &overrides, &["daemon", "stop"]);
    assert!(ok);
    assert_eq!(stopped["status"], "stopped");
    assert!(poll_until(|| process_is_dead(&pid.to_string())).await);
    assert!(!socket.exists(), "the socket is removed at exit");
    let (ok, after, _) = control(home.path(), &overrides, &["daemon", "stop"]);
    assert!(ok);
    assert_eq!(after["status"], "notRunning");
}
