//! Every process a command starts is gone — killed and reaped — when the command's item
//! completes (a tool call) or its response is sent (`command/exec`), and when the daemon exits:
//! a plain background child (`cmd &`), one that ignores hangups (`nohup`), and one that left the
//! command's process group and session (`setsid`) alike.
//!
//! Each background process writes its pid file (`echo $$` before `exec sleep`), and the command
//! waits for that file before it exits. The test finds the very process that was started by a
//! marker it carries in its environment from its start (`OPENTURN_ESCAPE=<dir>/<name>`): a
//! confined command may run in its own PID namespace, where the pid it writes is not the host's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use base64::Engine;
use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The ways a command can leave a process behind, by the name of the pid file each writes.
const ESCAPES: &[(&str, &str)] = &[("plain", ""), ("nohup", "nohup "), ("setsid", "setsid ")];

/// Shell text that starts `sleep 1000` in the background via `prefix` (output discarded unless
/// `hold_pipes`), writes its pid to `<name>.pid` in `dir`, and waits until the file is written.
fn start_background(dir: &Path, name: &str, prefix: &str, hold_pipes: bool) -> String {
    let pid_file = dir.join(format!("{name}.pid"));
    let pid_file = pid_file.display();
    let redirect = if hold_pipes { "" } else { " > /dev/null 2>&1" };
    let marker = marker(dir, name);
    format!(
        "{marker} {prefix}sh -c 'echo $$ > {pid_file}; exec sleep 1000'{redirect} & \
         while [ ! -s {pid_file} ]; do sleep 0.01; done"
    )
}

fn marker(dir: &Path, name: &str) -> String {
    format!("OPENTURN_ESCAPE={}", dir.join(name).display())
}

/// Asserts that the process named `name` started (the command waited for its pid file).
fn started(dir: &Path, name: &str) -> String {
    assert!(dir.join(format!("{name}.pid")).exists(), "{name}.pid");
    name.to_string()
}

/// The host pids of the processes carrying `name`'s marker, with their state letters.
fn marked(dir: &Path, name: &str) -> Vec<(u32, Option<char>)> {
    let marker = marker(dir, name);
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|byte| *byte == 0)
                    .any(|variable| variable == marker.as_bytes())
            })
        })
        .map(|pid| (pid, process_state(pid)))
        .collect()
}

/// The state letter of a process, `None` when it is not in the process table at all.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().chars().next()
}

/// Kills whatever is still running (so a failing run leaves nothing behind) and returns it.
fn survivors(
    dir: &Path,
    names: &[String],
    zombies_survive: bool,
) -> Vec<(String, u32, Option<char>)> {
    let left: Vec<(String, u32, Option<char>)> = names
        .iter()
        .flat_map(|name| {
            marked(dir, name)
                .into_iter()
                .map(move |(pid, state)| (name.clone(), pid, state))
        })
        .filter(|(_, _, state)| match state {
            None => false,
            // After the daemon exits, init reaps what it left; a zombie is already dead.
            Some('Z' | 'X') => zombies_survive,
            Some(_) => true,
        })
        .collect();
    for (_, pid, _) in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    left
}

/// After the daemon exits, its leftovers may take a moment to be reaped by init.
async fn survivors_after_exit(dir: &Path, names: &[String]) -> Vec<(String, u32, Option<char>)> {
    poll_until(|| {
        !names.iter().any(|name| {
            marked(dir, name)
                .iter()
                .any(|(_, state)| state.is_some_and(|state| !matches!(state, 'Z' | 'X')))
        })
    })
    .await;
    survivors(dir, names, false)
}

fn full_access(dir: &Path) -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
        "cwd": dir.display().to_string()})
}

#[tokio::test]
async fn what_a_tool_command_started_is_gone_when_its_item_completes() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let mut calls = ResponseBuilder::new("r1").created();
    for (n, (name, prefix)) in ESCAPES.iter().enumerate() {
        calls = calls.exec_call(
            &format!("fc_{n}"),
            &format!("call_{name}"),
            json!({"cmd": start_background(dir, name, prefix, false), "login": false}),
        );
    }
    // One that keeps the command's stdout open: the item must not wait for it (a 60 s timeout
    // would otherwise end it).
    let calls = calls.exec_call(
        "fc_piped",
        "call_piped",
        json!({"cmd": start_background(dir, "piped", "setsid ", true), "login": false,
               "timeout_ms": 60000}),
    );
    let script = Script::new([
        calls.completed(Usage::small(), None).build(),
        message_reply("r2", "msg_f", &["after"]),
    ]);
    let mut s = session(script, &[], full_access(dir)).await;
    let all = s.run_turn("start things").await;
    single_turn_end(&all, "completed");
    let completed = items_of(&all, "item/completed", "commandExecution");
    assert_eq!(completed.len(), 4);
    assert!(
        completed.iter().all(|item| item["status"] == "completed"),
        "{completed:#?}"
    );
    let mut names: Vec<String> = ESCAPES.iter().map(|(name, _)| started(dir, name)).collect();
    names.push(started(dir, "piped"));
    // Killed and reaped by the daemon before the item completed: not even a zombie is left.
    let left = survivors(dir, &names, true);
    assert!(left.is_empty(), "outlived their item: {left:?}");
}

/// Where no cgroup can be made for a command (or cgroups are turned off), its processes are
/// still found: by the marker in their environment, and by their process group when they
/// cleared their environment (`env -i`).
#[tokio::test]
async fn what_a_tool_command_started_is_gone_when_its_item_completes_even_without_cgroups() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let escapes = [ESCAPES, &[("cleared", "env -i ")]].concat();
    let mut calls = ResponseBuilder::new("r1").created();
    for (n, (name, prefix)) in escapes.iter().enumerate() {
        calls = calls.exec_call(
            &format!("fc_{n}"),
            &format!("call_{name}"),
            json!({"cmd": start_background(dir, name, prefix, false), "login": false}),
        );
    }
    let script = Script::new([
        calls.completed(Usage::small(), None).build(),
        message_reply("r2", "msg_f", &["after"]),
    ]);
    let provider = MockProvider::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn_with_env(
        home.path(),
        &mock_overrides(&provider),
        &[
            ("OPENTURN_TEST_KEY", "sk-test-secret-key"),
            ("OPENTURN_COMMAND_CGROUPS", "off"),
        ],
    );
    daemon.initialize().await;
    let thread_id = daemon.start_thread(full_access(dir)).await;
    let all = text_turn(&mut daemon, &thread_id, "start things").await;
    single_turn_end(&all, "completed");
    let completed = items_of(&all, "item/completed", "commandExecution");
    assert_eq!(completed.len(), escapes.len());
    // Unconfined, so the pid each wrote is the host's; `env -i` cleared the test's marker too.
    let left: Vec<(&str, u32, Option<char>)> = escapes
        .iter()
        .map(|(name, _)| {
            let pid_file = dir.join(format!("{name}.pid"));
            let pid: u32 = std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            (*name, pid, process_state(pid))
        })
        .filter(|(_, _, state)| state.is_some())
        .collect();
    for (_, pid, _) in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(left.is_empty(), "outlived their item: {left:?}");
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn what_a_running_tool_command_started_is_gone_when_the_daemon_exits() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let starts: Vec<String> = ESCAPES
        .iter()
        .map(|(name, prefix)| start_background(dir, name, prefix, false))
        .collect();
    let cmd = format!("{}; echo ready; sleep 1000", starts.join("; "));
    let script = Script::new([ResponseBuilder::new("r1")
        .created()
        .exec_call("fc_1", "call_1", json!({"cmd": cmd, "login": false}))
        .completed(Usage::small(), None)
        .build()]);
    let mut s = session(script, &[], full_access(dir)).await;
    s.start_turn("start things", json!({})).await;
    s.daemon
        .collect_until(|m| {
            m["method"] == "item/commandExecution/outputDelta"
                && m["params"]["delta"]
                    .as_str()
                    .is_some_and(|d| d.contains("ready"))
        })
        .await;
    let names: Vec<String> = ESCAPES.iter().map(|(name, _)| started(dir, name)).collect();
    // Running now, and found by their markers (so "none left" below is not "none found").
    for name in &names {
        assert_eq!(marked(dir, name).len(), 1, "{name}");
    }
    s.daemon.close_stdin();
    assert_eq!(s.daemon.wait_exit().await, Some(0));
    let left = survivors_after_exit(dir, &names).await;
    assert!(left.is_empty(), "outlived the daemon: {left:?}");
}

#[tokio::test]
async fn what_command_exec_started_is_gone_when_it_answers() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let (mut daemon, _home) = daemon_without_replies().await;
    let mut starts: Vec<String> = ESCAPES
        .iter()
        .map(|(name, prefix)| start_background(dir, name, prefix, false))
        .collect();
    starts.push(start_background(dir, "piped", "setsid ", true));
    let result = daemon
        .ok(
            "command/exec",
            // Confined (workspace-write in the test's dir): the sandbox changes nothing here.
            json!({"command": ["sh", "-c", format!("{}; echo done", starts.join("; "))],
                   "timeoutMs": 60000, "cwd": dir.display().to_string(),
                   "sandboxPolicy": {"type": "workspaceWrite"}}),
        )
        .await;
    assert_eq!(result["exitCode"], 0, "{result}");
    assert_eq!(result["stdout"], "done\n");
    let mut names: Vec<String> = ESCAPES.iter().map(|(name, _)| started(dir, name)).collect();
    names.push(started(dir, "piped"));
    let left = survivors(dir, &names, true);
    assert!(left.is_empty(), "outlived command/exec: {left:?}");
}

#[tokio::test]
async fn what_a_running_command_exec_started_is_gone_when_the_daemon_exits() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let (mut daemon, _home) = daemon_without_replies().await;
    let starts: Vec<String> = ESCAPES
        .iter()
        .map(|(name, prefix)| start_background(dir, name, prefix, false))
        .collect();
    daemon
        .send_request(
            "command/exec",
            json!({"command": ["sh", "-c", format!("{}; echo ready; sleep 1000", starts.join("; "))],
                   "processId": "long", "streamStdoutStderr": true, "disableTimeout": true,
                   "cwd": dir.display().to_string(), "sandboxPolicy": {"type": "workspaceWrite"}}),
        )
        .await;
    let delta = daemon.notification("command/exec/outputDelta").await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(delta["params"]["deltaBase64"].as_str().unwrap_or_default())
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&bytes), "ready\n");
    let names: Vec<String> = ESCAPES.iter().map(|(name, _)| started(dir, name)).collect();
    // Running now, and found by their markers (so "none left" below is not "none found").
    for name in &names {
        assert_eq!(marked(dir, name).len(), 1, "{name}");
    }
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
    let left = survivors_after_exit(dir, &names).await;
    assert!(left.is_empty(), "outlived the daemon: {left:?}");
}
