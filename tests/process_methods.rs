//! `process/*` through the real binary: a spawn over pipes whose output comes in
//! `process/exited`, a PTY process written to, resized and killed, `env` whose `null` unsets,
//! caps and timeouts, handles that name one live process at most, the refusal without the
//! experimental capability, and kills that take the process's descendants and nothing else
//! (`process/kill`, the connection closing, the daemon's end).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod listener_support;
mod support;

use base64::Engine;
use serde_json::{json, Value};
use support::*;

/// A daemon whose connection opted into the experimental API (or not), with `env` added to
/// its environment.
async fn daemon(experimental: bool, env: &[(&str, &str)]) -> (Daemon, tempfile::TempDir) {
    let provider = provider(Vec::new()).await;
    let home = tempfile::tempdir().unwrap();
    let mut env = env.to_vec();
    env.push(("OPENTURN_TEST_KEY", "sk-test-secret-key"));
    let mut daemon = Daemon::spawn_with_env(home.path(), &mock_overrides(&provider), &env);
    // The provider is never asked anything; it only has to outlive nothing.
    drop(provider);
    daemon
        .ok(
            "initialize",
            json!({"clientInfo": {"name": "openturn-tests", "version": "1.0"},
                   "capabilities": {"experimentalApi": experimental}}),
        )
        .await;
    daemon.send(json!({"method": "initialized"})).await;
    (daemon, home)
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The decoded `process/outputDelta` text of `handle` among `messages`.
fn streamed(messages: &[Value], handle: &str) -> String {
    messages
        .iter()
        .filter(|m| m["method"] == "process/outputDelta" && m["params"]["processHandle"] == handle)
        .map(|m| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(m["params"]["deltaBase64"].as_str().unwrap())
                .unwrap();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .collect()
}

fn is_exit_of(message: &Value, handle: &str) -> bool {
    message["method"] == "process/exited" && message["params"]["processHandle"] == handle
}

/// Reads messages into `seen` until `handle`'s streamed output contains `needle`.
async fn read_until_streamed(
    daemon: &mut Daemon,
    seen: &mut Vec<Value>,
    handle: &str,
    needle: &str,
) {
    while !streamed(seen, handle).contains(needle) {
        seen.push(daemon.next_message().await);
    }
}

/// Reads messages into `seen` until `handle`'s streamed output holds `lines` whole lines; those
/// lines.
async fn streamed_lines(
    daemon: &mut Daemon,
    seen: &mut Vec<Value>,
    handle: &str,
    lines: usize,
) -> Vec<String> {
    while streamed(seen, handle).matches('\n').count() < lines {
        seen.push(daemon.next_message().await);
    }
    streamed(seen, handle)
        .lines()
        .map(|line| line.trim().to_string())
        .collect()
}

#[tokio::test]
async fn a_piped_process_answers_first_then_reports_its_buffered_output_in_exited() {
    let (mut daemon, _home) = daemon(true, &[]).await;
    let id = daemon
        .send_request(
            "process/spawn",
            json!({"command": ["sh", "-c", "echo out; echo err >&2; pwd; exit 3"],
                   "processHandle": "a", "cwd": "/tmp"}),
        )
        .await;
    let seen = daemon.collect_until(|m| is_exit_of(m, "a")).await;
    let answered = seen.iter().position(|m| m.get("id") == Some(&id)).unwrap();
    assert_eq!(seen[answered]["result"], json!({}));
    // The response comes before anything about the process.
    assert_eq!(answered + 1, seen.len() - 1, "{seen:?}");
    assert_eq!(
        seen.last().unwrap()["params"],
        json!({"processHandle": "a", "exitCode": 3, "stdout": "out\n/tmp\n",
               "stdoutCapReached": false, "stderr": "err\n", "stderrCapReached": false,
               "outputDrainTimedOut": false})
    );
}

#[tokio::test]
async fn env_overrides_the_daemons_own_and_null_unsets_but_keys_stay_out() {
    let (mut daemon, _home) = daemon(
        true,
        &[
            ("OPENTURN_PROC_KEPT", "kept"),
            ("OPENTURN_PROC_UNSET", "present"),
        ],
    )
    .await;
    let script = "echo ${OPENTURN_PROC_KEPT:-none} ${OPENTURN_PROC_UNSET:-none} \
                  ${OPENTURN_PROC_NEW:-none} ${OPENTURN_TEST_KEY:-none}";
    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sh", "-c", script], "processHandle": "e", "cwd": "/",
                   "env": {"OPENTURN_PROC_UNSET": null, "OPENTURN_PROC_NEW": "new"}}),
        )
        .await;
    let exited = daemon.notification("process/exited").await;
    assert_eq!(exited["params"]["stdout"], "kept none new none\n");
    assert_eq!(exited["params"]["exitCode"], 0);
}

#[tokio::test]
async fn a_tty_process_is_sized_written_to_resized_and_killed() {
    let (mut daemon, _home) = daemon(true, &[]).await;
    let script = "stty size; read line; echo got:$line; [ -t 0 ] && echo tty; \
                  read again; stty size; sleep 600";
    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sh", "-c", script], "processHandle": "t", "cwd": "/",
                   "tty": true, "size": {"rows": 30, "cols": 100}, "timeoutMs": null}),
        )
        .await;
    let mut seen = Vec::new();
    read_until_streamed(&mut daemon, &mut seen, "t", "30 100").await;
    let written = daemon
        .ok(
            "process/writeStdin",
            json!({"processHandle": "t", "deltaBase64": b64("hello\n")}),
        )
        .await;
    assert_eq!(written, json!({}));
    read_until_streamed(&mut daemon, &mut seen, "t", "tty").await;
    let resized = daemon
        .ok(
            "process/resizePty",
            json!({"processHandle": "t", "size": {"rows": 5, "cols": 7}}),
        )
        .await;
    assert_eq!(resized, json!({}));
    daemon
        .ok(
            "process/writeStdin",
            json!({"processHandle": "t", "deltaBase64": b64("go\n")}),
        )
        .await;
    read_until_streamed(&mut daemon, &mut seen, "t", "5 7").await;
    let output = streamed(&seen, "t");
    assert!(output.contains("got:hello"), "{output:?}");
    assert!(output.contains("tty"), "{output:?}");
    assert_eq!(
        daemon
            .ok("process/kill", json!({"processHandle": "t"}))
            .await,
        json!({})
    );
    let exited = daemon.notification("process/exited").await;
    // Killed by SIGKILL; its output was streamed, so none is repeated here.
    assert_eq!(exited["params"]["exitCode"], 137);
    assert_eq!(exited["params"]["stdout"], "");
}

#[tokio::test]
async fn a_handle_names_one_live_process_and_nothing_once_it_exited() {
    let (mut daemon, _home) = daemon(true, &[]).await;
    daemon
        .ok(
            "process/spawn",
            json!({"command": ["cat"], "processHandle": "h", "cwd": "/", "streamStdin": true,
                   "timeoutMs": null}),
        )
        .await;
    let duplicate = daemon
        .err(
            "process/spawn",
            json!({"command": ["true"], "processHandle": "h", "cwd": "/"}),
        )
        .await;
    assert_eq!(duplicate["code"], -32600);
    assert_eq!(
        duplicate["message"],
        "duplicate active process handle: \"h\""
    );
    daemon
        .ok(
            "process/writeStdin",
            json!({"processHandle": "h", "deltaBase64": b64("abc\n"), "closeStdin": true}),
        )
        .await;
    let exited = daemon.notification("process/exited").await;
    assert_eq!(exited["params"]["stdout"], "abc\n");
    assert_eq!(exited["params"]["exitCode"], 0);
    // Gone with its exit: every request naming it is refused.
    for (method, params) in [
        ("process/kill", json!({"processHandle": "h"})),
        (
            "process/writeStdin",
            json!({"processHandle": "h", "deltaBase64": b64("x")}),
        ),
        (
            "process/resizePty",
            json!({"processHandle": "h", "size": {"rows": 2, "cols": 2}}),
        ),
    ] {
        let refused = daemon.err(method, params).await;
        assert_eq!(refused["code"], -32600, "{method}");
        assert_eq!(
            refused["message"], "no active process for process handle \"h\"",
            "{method}"
        );
    }
    // A process without streamed stdin takes no writes, and one without a PTY no resize.
    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sleep", "600"], "processHandle": "s", "cwd": "/",
                   "timeoutMs": null}),
        )
        .await;
    let no_stdin = daemon
        .err(
            "process/writeStdin",
            json!({"processHandle": "s", "deltaBase64": b64("x")}),
        )
        .await;
    assert_eq!(
        no_stdin["message"],
        "stdin streaming is not enabled for this process"
    );
    let no_pty = daemon
        .err(
            "process/resizePty",
            json!({"processHandle": "s", "size": {"rows": 2, "cols": 2}}),
        )
        .await;
    assert_eq!(
        no_pty["message"],
        "failed to resize PTY: process is not attached to a PTY"
    );
    daemon
        .ok("process/kill", json!({"processHandle": "s"}))
        .await;
    let killed = daemon.notification("process/exited").await;
    assert_eq!(killed["params"]["processHandle"], "s");
}

#[tokio::test]
async fn caps_cut_output_and_a_timeout_kills_with_124() {
    let (mut daemon, _home) = daemon(true, &[]).await;
    let script = "printf %0100d 0; printf %050d 0 >&2";
    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sh", "-c", script], "processHandle": "c", "cwd": "/",
                   "outputBytesCap": 10}),
        )
        .await;
    let capped = daemon.notification("process/exited").await;
    assert_eq!(capped["params"]["stdout"], "0000000000");
    assert_eq!(capped["params"]["stderr"], "0000000000");
    assert_eq!(capped["params"]["stdoutCapReached"], true);
    assert_eq!(capped["params"]["stderrCapReached"], true);

    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sh", "-c", script], "processHandle": "d", "cwd": "/",
                   "outputBytesCap": 10, "streamStdoutStderr": true}),
        )
        .await;
    let seen = daemon.collect_until(|m| is_exit_of(m, "d")).await;
    assert_eq!(streamed(&seen, "d"), "0".repeat(20));
    let exited = &seen.last().unwrap()["params"];
    assert_eq!(exited["stdout"], "");
    assert_eq!(exited["stdoutCapReached"], true);

    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sleep", "600"], "processHandle": "t", "cwd": "/",
                   "timeoutMs": 100}),
        )
        .await;
    let timed_out = daemon.notification("process/exited").await;
    assert_eq!(timed_out["params"]["exitCode"], 124);

    let negative = daemon
        .err(
            "process/spawn",
            json!({"command": ["true"], "processHandle": "n", "cwd": "/", "timeoutMs": -5}),
        )
        .await;
    assert_eq!(negative["code"], -32602);
    let sized = daemon
        .err(
            "process/spawn",
            json!({"command": ["true"], "processHandle": "n", "cwd": "/",
                   "size": {"rows": 5, "cols": 5}}),
        )
        .await;
    assert_eq!(sized["message"], "process/spawn size requires tty: true");
    let empty = daemon
        .err(
            "process/spawn",
            json!({"command": [], "processHandle": "n", "cwd": "/"}),
        )
        .await;
    assert_eq!(empty["message"], "command must not be empty");
}

#[tokio::test]
async fn without_the_experimental_capability_every_process_method_is_refused() {
    let (mut daemon, home) = daemon(false, &[]).await;
    let marker = home.path().join("ran");
    let script = format!("touch {}", marker.display());
    for (method, params) in [
        (
            "process/spawn",
            json!({"command": ["sh", "-c", script], "processHandle": "x", "cwd": "/"}),
        ),
        (
            "process/writeStdin",
            json!({"processHandle": "x", "closeStdin": true}),
        ),
        (
            "process/resizePty",
            json!({"processHandle": "x", "size": {"rows": 2, "cols": 2}}),
        ),
        ("process/kill", json!({"processHandle": "x"})),
    ] {
        let refused = daemon.err(method, params).await;
        assert_eq!(refused["code"], -32600);
        assert_eq!(
            refused["message"],
            format!("{method} requires experimentalApi capability")
        );
    }
    // Refused before anything ran.
    assert!(!marker.exists());
}

#[tokio::test]
async fn kill_takes_the_process_and_its_descendants_and_nothing_else() {
    let (mut daemon, _home) = daemon(true, &[]).await;
    let mut bystander = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    // A child in the process group, one that left it for a session of its own, and the leader.
    let script = "sleep 600 & echo $!; setsid sleep 600 & echo $!; echo $$; wait";
    for handle in ["doomed", "spared"] {
        daemon
            .ok(
                "process/spawn",
                json!({"command": ["sh", "-c", script], "processHandle": handle, "cwd": "/",
                       "streamStdoutStderr": true, "timeoutMs": null}),
            )
            .await;
    }
    let mut seen = Vec::new();
    let doomed = streamed_lines(&mut daemon, &mut seen, "doomed", 3).await;
    let spared = streamed_lines(&mut daemon, &mut seen, "spared", 3).await;
    assert_eq!(doomed.len(), 3, "{doomed:?}");
    assert_eq!(spared.len(), 3, "{spared:?}");
    for pid in doomed.iter().chain(&spared) {
        assert!(!process_is_dead(pid), "{pid} not running before the kill");
    }
    daemon
        .ok("process/kill", json!({"processHandle": "doomed"}))
        .await;
    let exited = daemon.collect_until(|m| is_exit_of(m, "doomed")).await;
    assert_eq!(exited.last().unwrap()["params"]["exitCode"], 137);
    for pid in &doomed {
        assert!(poll_until(|| process_is_dead(pid)).await, "{pid} survived");
    }
    // Nothing else: the other process's tree, a process the daemon never started, the daemon.
    for pid in &spared {
        assert!(!process_is_dead(pid), "{pid} died with another handle");
    }
    assert!(bystander.try_wait().unwrap().is_none());
    daemon
        .ok("process/kill", json!({"processHandle": "spared"}))
        .await;
    daemon.notification("process/exited").await;
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}

#[tokio::test]
async fn the_daemons_end_kills_its_processes() {
    let (mut daemon, _home) = daemon(true, &[]).await;
    daemon
        .ok(
            "process/spawn",
            json!({"command": ["sh", "-c", "sleep 600 & echo $!; echo $$; wait"],
                   "processHandle": "p", "cwd": "/", "streamStdoutStderr": true,
                   "timeoutMs": null}),
        )
        .await;
    let pids = streamed_lines(&mut daemon, &mut Vec::new(), "p", 2).await;
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
    for pid in &pids {
        assert!(poll_until(|| process_is_dead(pid)).await, "{pid} survived");
    }
}

#[tokio::test]
async fn a_socket_connection_that_closes_kills_its_processes_and_the_daemon_serves_on() {
    let provider = provider(Vec::new()).await;
    let home = tempfile::tempdir().unwrap();
    let daemon = listener_support::listen(
        home.path(),
        &mock_overrides(&provider),
        "ws://127.0.0.1:0",
        &[],
    )
    .await;
    let mut client = daemon.connect(None).await;
    let initialized = client
        .request(
            "initialize",
            json!({"clientInfo": {"name": "openturn-tests", "version": "1.0"},
                   "capabilities": {"experimentalApi": true}}),
        )
        .await;
    assert!(initialized.get("result").is_some(), "{initialized}");
    client.send(json!({"method": "initialized"})).await;
    let spawned = client
        .request(
            "process/spawn",
            json!({"command": ["sh", "-c", "sleep 600 & echo $!; echo $$; wait"],
                   "processHandle": "p", "cwd": "/", "streamStdoutStderr": true,
                   "timeoutMs": null}),
        )
        .await;
    assert_eq!(spawned["result"], json!({}));
    let mut seen = Vec::new();
    while streamed(&seen, "p").matches('\n').count() < 2 {
        seen.push(client.next_message().await);
    }
    let pids: Vec<String> = streamed(&seen, "p")
        .lines()
        .map(|line| line.trim().to_string())
        .collect();
    drop(client);
    for pid in &pids {
        assert!(poll_until(|| process_is_dead(pid)).await, "{pid} survived");
    }
    // Only that connection's processes went; the daemon still answers a new one.
    let mut other = daemon.connect(None).await;
    other.initialize().await;
}
