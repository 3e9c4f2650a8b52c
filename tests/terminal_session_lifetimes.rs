//! How long the model's commands (`exec_command` sessions) live, through the real binary, as the
//! reference behaves: an interrupt ends the model's wait, not the command, which stays a
//! background terminal (listed with the CPU and memory it uses) until a client terminates it;
//! cleaning a thread's terminals and closing (unloading) the thread kill that thread's commands
//! and nothing else — not another thread's command, not the thread's MCP server while the thread
//! lives, not an unrelated process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::mcp::server_overrides;
use support::*;
use turn_support::*;

fn exec_reply(n: usize, cmd: &str, yield_time_ms: u64) -> Reply {
    ResponseBuilder::new(format!("r{n}"))
        .created()
        .exec_call(
            &format!("fc_{n}"),
            &format!("call_{n}"),
            json!({"cmd": cmd, "yield_time_ms": yield_time_ms, "login": false}),
        )
        .completed(Usage::small(), None)
        .build()
}

/// A daemon whose client opted into the experimental API, with `overrides` and `env`.
async fn experimental_daemon(
    script: Script,
    overrides: &[String],
    env: &[(&str, &str)],
) -> (Daemon, MockProvider, tempfile::TempDir) {
    let provider = MockProvider::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut all = mock_overrides(&provider);
    all.extend(overrides.iter().cloned());
    let mut env = env.to_vec();
    env.push(("OPENTURN_TEST_KEY", "sk-test-secret-key"));
    let mut daemon = Daemon::spawn_with_env(home.path(), &all, &env);
    daemon
        .request(
            "initialize",
            json!({"clientInfo": {"name": "t", "version": "1"},
                   "capabilities": {"experimentalApi": true}}),
        )
        .await;
    daemon.send(json!({"method": "initialized"})).await;
    (daemon, provider, home)
}

async fn start_thread_in(daemon: &mut Daemon, dir: &Path) -> String {
    let params = json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
                        "cwd": dir.display().to_string()});
    daemon.start_thread(params).await
}

async fn run_turn_on(daemon: &mut Daemon, thread_id: &str) -> Vec<Value> {
    let response = daemon
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
        )
        .await;
    assert!(response.get("result").is_some(), "{response}");
    daemon.until_turn_completed().await
}

async fn pid_written_to(path: PathBuf) -> String {
    assert!(
        poll_until(|| std::fs::read_to_string(&path).is_ok_and(|text| text.ends_with('\n'))).await,
        "{} was never written",
        path.display()
    );
    std::fs::read_to_string(&path).unwrap().trim().to_string()
}

async fn list(daemon: &mut Daemon, thread_id: &str) -> Vec<Value> {
    let page = daemon
        .ok(
            "thread/backgroundTerminals/list",
            json!({"threadId": thread_id}),
        )
        .await;
    page["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn an_interrupted_wait_leaves_its_command_running_as_a_background_terminal() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    // Burns some CPU in the leader itself (kept across `exec`), then waits.
    let cmd = "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; echo $$ > leader.pid; \
               echo burned; exec sleep 600";
    let script = Script::new([exec_reply(0, cmd, 60_000)]);
    let (mut daemon, _provider, _home) = experimental_daemon(script, &[], &[]).await;
    let thread_id = start_thread_in(&mut daemon, dir).await;
    let started = daemon
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
        )
        .await;
    let turn_id = started["result"]["turn"]["id"].clone();
    let mut messages = daemon
        .collect_until(|m| {
            m["method"] == "item/commandExecution/outputDelta"
                && m["params"]["delta"]
                    .as_str()
                    .unwrap_or("")
                    .contains("burned")
        })
        .await;
    let interrupted = daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await;
    assert_eq!(interrupted, json!({}));
    messages.extend(daemon.until_turn_completed().await);
    single_turn_end(&messages, "interrupted");
    assert!(items_of(&messages, "item/completed", "commandExecution").is_empty());
    let leader = pid_written_to(dir.join("leader.pid")).await;
    assert!(!process_is_dead(&leader), "the interrupt killed {leader}");

    let terminals = list(&mut daemon, &thread_id).await;
    assert_eq!(terminals.len(), 1, "{terminals:?}");
    let terminal = &terminals[0];
    assert_eq!(terminal["command"], cmd);
    assert_eq!(terminal["osPid"], leader.parse::<u64>().unwrap());
    let cpu = terminal["cpuPercent"].as_f64().unwrap();
    assert!(cpu > 0.0, "{terminal}");
    assert!(terminal["rssKb"].as_u64().unwrap() > 0, "{terminal}");

    let process_id = terminal["processId"].clone();
    let terminated = daemon
        .ok(
            "thread/backgroundTerminals/terminate",
            json!({"threadId": thread_id, "processId": process_id}),
        )
        .await;
    assert_eq!(terminated, json!({"terminated": true}));
    let completion = daemon
        .collect_until(|m| m["method"] == "item/completed")
        .await;
    let item = &completion.last().unwrap()["params"]["item"];
    assert_eq!(
        (item["status"].clone(), item["exitCode"].clone()),
        (json!("failed"), json!(-1))
    );
    assert!(
        poll_until(|| process_is_dead(&leader)).await,
        "{leader} survived"
    );
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn cleaning_and_closing_a_thread_kill_its_commands_and_nothing_else() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let pid_dir = tempfile::tempdir().unwrap();
    let mut unrelated = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let background = |name: &str| format!("echo $$ > {name}.pid; exec sleep 600");
    let script = Script::new([
        exec_reply(0, &background("a1"), 250),
        message_reply("r1", "msg_1", &["left a1"]),
        exec_reply(2, &background("b"), 250),
        message_reply("r3", "msg_3", &["left b"]),
        exec_reply(4, &background("a2"), 250),
        message_reply("r5", "msg_5", &["left a2"]),
    ]);
    let mut overrides = server_overrides("probe", &[]);
    overrides.push("thread_unload_delay_secs=0".to_string());
    let pid_dir_text = pid_dir.path().display().to_string();
    let (mut daemon, _provider, _home) = experimental_daemon(
        script,
        &overrides,
        &[("MCP_TEST_PID_DIR", pid_dir_text.as_str())],
    )
    .await;
    let mcp_pids = || -> Vec<String> {
        std::fs::read_dir(pid_dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };

    let thread_a = start_thread_in(&mut daemon, dirs[0].path()).await;
    single_turn_end(&run_turn_on(&mut daemon, &thread_a).await, "completed");
    assert!(poll_until(|| mcp_pids().len() == 1).await, "no MCP server");
    let mcp_of_a = mcp_pids()[0].clone();
    let a1 = pid_written_to(dirs[0].path().join("a1.pid")).await;
    let thread_b = start_thread_in(&mut daemon, dirs[1].path()).await;
    single_turn_end(&run_turn_on(&mut daemon, &thread_b).await, "completed");
    let b = pid_written_to(dirs[1].path().join("b.pid")).await;
    assert!(!process_is_dead(&a1) && !process_is_dead(&b));

    // Cleaning A's terminals ends A's command only.
    let cleaned = daemon
        .ok(
            "thread/backgroundTerminals/clean",
            json!({"threadId": thread_a}),
        )
        .await;
    assert_eq!(cleaned, json!({}));
    assert!(poll_until(|| process_is_dead(&a1)).await, "{a1} survived");
    assert!(list(&mut daemon, &thread_a).await.is_empty());
    assert_eq!(list(&mut daemon, &thread_b).await.len(), 1);
    assert!(!process_is_dead(&b), "another thread's command died");
    assert!(!process_is_dead(&mcp_of_a), "the thread's MCP server died");

    // Closing A (its last subscriber leaves, no unload delay) ends A's new command only.
    single_turn_end(&run_turn_on(&mut daemon, &thread_a).await, "completed");
    let a2 = pid_written_to(dirs[0].path().join("a2.pid")).await;
    let unsubscribed = daemon
        .ok("thread/unsubscribe", json!({"threadId": thread_a}))
        .await;
    assert_eq!(unsubscribed["status"], "unsubscribed");
    let closed = daemon.notification("thread/closed").await;
    assert_eq!(closed["params"]["threadId"], thread_a.as_str());
    assert!(
        poll_until(|| process_is_dead(&a2)).await,
        "{a2} outlived its thread"
    );
    assert!(!process_is_dead(&b), "another thread's command died");
    assert_eq!(list(&mut daemon, &thread_b).await.len(), 1);

    // The daemon's end ends B's command; the unrelated process lives on.
    daemon.exit_cleanly().await;
    assert!(
        poll_until(|| process_is_dead(&b)).await,
        "{b} outlived the daemon"
    );
    assert!(
        unrelated.try_wait().unwrap().is_none(),
        "an unrelated process died"
    );
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}
