//! `command/exec` (PROTOCOL.md §6): exit code and separate stdout/stderr, timeout → 124, env
//! set/unset, cwd, output caps, streaming deltas; a long command does not block other requests.

mod support;

use base64::Engine;
use serde_json::{json, Value};
use support::*;

async fn daemon() -> (Daemon, tempfile::TempDir) {
    let provider = MockProvider::start(Script::new(Vec::new()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    (daemon, home)
}

#[tokio::test]
async fn command_exec_reports_exit_code_output_env_and_cwd() {
    let (mut daemon, home) = daemon().await;
    let result = daemon
        .ok(
            "command/exec",
            json!({"command": ["sh", "-c", "echo out; echo err 1>&2; exit 3"]}),
        )
        .await;
    assert_eq!(
        result,
        json!({"exitCode": 3, "stdout": "out\n", "stderr": "err\n"})
    );
    let cwd = home.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let result = daemon
        .ok(
            "command/exec",
            json!({"command": ["sh", "-c", "pwd; echo \"$GREETING-${HOME:-unset}\""],
                   "cwd": cwd, "env": {"GREETING": "hi", "HOME": null}}),
        )
        .await;
    assert_eq!(result["stdout"], format!("{}\nhi-unset\n", cwd.display()));
    let capped = daemon
        .ok(
            "command/exec",
            json!({"command": ["sh", "-c", "printf 0123456789"], "outputBytesCap": 4}),
        )
        .await;
    assert_eq!(capped["stdout"], "0123");
    let empty = daemon.err("command/exec", json!({"command": []})).await;
    assert_eq!(empty["message"], "command must not be empty");
}

#[tokio::test]
async fn a_timed_out_command_exits_124_without_blocking_other_requests() {
    let (mut daemon, _home) = daemon().await;
    let slow = daemon
        .send_request(
            "command/exec",
            json!({"command": ["sh", "-c", "sleep 30"], "timeoutMs": 300}),
        )
        .await;
    // Served while the command runs.
    let loaded = daemon.ok("thread/loaded/list", json!({})).await;
    assert_eq!(loaded["data"], json!([]));
    let result = daemon.response_to(slow).await;
    assert_eq!(result["result"]["exitCode"], 124);
}

#[tokio::test]
async fn streamed_output_arrives_as_deltas_and_the_buffers_stay_empty() {
    let (mut daemon, _home) = daemon().await;
    let id = daemon
        .send_request(
            "command/exec",
            json!({"command": ["sh", "-c", "echo one; echo two 1>&2"], "processId": "p1",
                   "streamStdoutStderr": true}),
        )
        .await;
    let result = daemon.response_to(id).await;
    assert_eq!(
        result["result"],
        json!({"exitCode": 0, "stdout": "", "stderr": ""})
    );
    let mut streams: Vec<(String, String)> = Vec::new();
    while streams.len() < 2 {
        let delta: Value = daemon.notification("command/exec/outputDelta").await;
        assert_eq!(delta["params"]["processId"], "p1");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(delta["params"]["deltaBase64"].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
        streams.push((
            delta["params"]["stream"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    streams.sort();
    assert_eq!(
        streams,
        vec![
            ("stderr".to_string(), "two\n".to_string()),
            ("stdout".to_string(), "one\n".to_string())
        ]
    );
}
