//! `config/mcpServer/reload` applies config.toml's `[mcp_servers]` to a loaded thread: after a
//! `config/batchWrite` that removes one server, changes another and adds a third, the removed
//! server's process ends, the changed one is replaced by a new process, the new one starts, each
//! (re)start reported as `mcpServer/startupStatus/updated`, and the unchanged server keeps its
//! very process. A client then calls a tool of the new server (`mcpServer/tool/call`) and reads
//! a resource (`mcpServer/resource/read`) without any turn.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use support::mcp::server_script;
use support::*;

/// A `[mcp_servers.NAME]` table running the test server, writing its pid into `pids/NAME`.
fn server_table(name: &str, pids: &Path, extra_args: &[&str]) -> String {
    let dir = pids.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = vec![server_script()];
    args.extend(extra_args.iter().map(|arg| arg.to_string()));
    format!(
        "[mcp_servers.{name}]\ncommand = \"python3\"\nargs = {}\nenv = {{ MCP_TEST_PID_DIR = \"{}\" }}\n\n",
        serde_json::to_string(&args).unwrap(),
        dir.display()
    )
}

/// The pids written so far into `pids/NAME`.
fn pids_of(pids: &Path, name: &str) -> Vec<i32> {
    let mut found: Vec<i32> = std::fs::read_dir(pids.join(name))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect();
    found.sort();
    found
}

/// Alive and not a zombie.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            Some(rest.split_whitespace().next()? != "Z")
        })
        .unwrap_or(false)
}

/// Waits (bounded by the test timeout) for `check` to hold, looking every few milliseconds:
/// process exits have no event to wait on.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads `mcpServer/startupStatus/updated` until each of `names` is settled, returning every
/// status seen per server.
async fn settle(daemon: &mut Daemon, names: &[&str]) -> BTreeMap<String, Vec<String>> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let settled = |seen: &BTreeMap<String, Vec<String>>| {
        names.iter().all(|name| {
            seen.get(*name)
                .and_then(|states| states.last())
                .is_some_and(|state| state != "starting")
        })
    };
    while !settled(&seen) {
        let status = daemon.notification("mcpServer/startupStatus/updated").await;
        let params = &status["params"];
        seen.entry(params["name"].as_str().unwrap().to_string())
            .or_default()
            .push(params["status"].as_str().unwrap().to_string());
    }
    seen
}

#[tokio::test]
async fn reload_starts_new_stops_removed_restarts_changed_and_keeps_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let pids: PathBuf = home.path().join("pids");
    let config = format!(
        "# servers\n{}{}{}",
        server_table("change", &pids, &[]),
        server_table("gone", &pids, &[]),
        server_table("keep", &pids, &[]),
    );
    std::fs::write(home.path().join("config.toml"), &config).unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let first = settle(&mut daemon, &["change", "gone", "keep"]).await;
    for name in ["change", "gone", "keep"] {
        assert_eq!(first[name], vec!["starting", "ready"], "{first:?}");
    }
    let keep_pid = pids_of(&pids, "keep");
    let gone_pid = pids_of(&pids, "gone");
    let change_pid = pids_of(&pids, "change");
    assert_eq!(
        (keep_pid.len(), gone_pid.len(), change_pid.len()),
        (1, 1, 1)
    );

    let added_dir = pids.join("added");
    std::fs::create_dir_all(&added_dir).unwrap();
    daemon
        .ok(
            "config/batchWrite",
            json!({"edits": [
                {"keyPath": "mcp_servers.gone", "value": null, "mergeStrategy": "replace"},
                {"keyPath": "mcp_servers.change.args", "value": [server_script(), "serve"],
                 "mergeStrategy": "replace"},
                {"keyPath": "mcp_servers.added", "mergeStrategy": "replace", "value": {
                    "command": "python3", "args": [server_script()],
                    "env": {"MCP_TEST_PID_DIR": added_dir.display().to_string()}}},
            ]}),
        )
        .await;
    assert_eq!(
        daemon.ok("config/mcpServer/reload", json!(null)).await,
        json!({})
    );
    let second = settle(&mut daemon, &["added", "change"]).await;
    assert_eq!(second["added"], vec!["starting", "ready"], "{second:?}");
    assert_eq!(second["change"], vec!["starting", "ready"], "{second:?}");

    eventually("the removed server's process ends", || {
        !running(gone_pid[0])
    })
    .await;
    eventually("the changed server's old process ends", || {
        !running(change_pid[0])
    })
    .await;
    let change_now = pids_of(&pids, "change");
    assert_eq!(change_now.len(), 2, "a new process for the changed server");
    assert!(change_now
        .iter()
        .any(|pid| *pid != change_pid[0] && running(*pid)));
    assert_eq!(pids_of(&pids, "keep"), keep_pid);
    assert!(
        running(keep_pid[0]),
        "the unchanged server kept its process"
    );
    // Nothing was said about the unchanged server.
    assert!(!second.contains_key("keep"), "{second:?}");

    let listed = daemon
        .ok("mcpServerStatus/list", json!({"threadId": thread_id}))
        .await;
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["added", "change", "keep"]);

    let called = daemon
        .ok(
            "mcpServer/tool/call",
            json!({"threadId": thread_id, "server": "added", "tool": "echo",
                   "arguments": {"text": "hello"}}),
        )
        .await;
    assert_eq!(called["content"][0]["text"], "hello");
    assert_eq!(called["structuredContent"], json!({"echoed": "hello"}));
    let read = daemon
        .ok(
            "mcpServer/resource/read",
            json!({"threadId": thread_id, "server": "added", "uri": "test://greeting"}),
        )
        .await;
    assert_eq!(
        read,
        json!({"contents": [{"uri": "test://greeting", "mimeType": "text/plain",
                             "text": "contents of test://greeting"}],
               "originCallId": null})
    );
    let unknown = daemon
        .err(
            "mcpServer/tool/call",
            json!({"threadId": thread_id, "server": "gone", "tool": "echo"}),
        )
        .await;
    assert!(
        unknown["message"].as_str().unwrap().contains("`gone`"),
        "{unknown}"
    );
    daemon.exit_cleanly().await;
}
