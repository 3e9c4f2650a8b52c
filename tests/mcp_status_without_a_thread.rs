//! `mcpServerStatus/list` before any thread exists, through the real binary, as editors call it
//! to draw their MCP settings: each configured server is started, shows its tools, `serverInfo`
//! and capabilities (or why it could not start) with no runtime state, and its process is gone
//! once the answer is out — killed if it ignores its closed stdin. A slow probe does not hold up
//! the requests sent after it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::mcp::server_overrides;
use support::*;

/// The pids the test server wrote into `dir` (one file per process started).
fn pids_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// Alive and not a zombie.
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn by_name<'a>(listing: &'a Value, name: &str) -> &'a Value {
    listing["data"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|server| server["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {listing}"))
}

#[tokio::test]
async fn servers_are_probed_listed_and_stopped_when_no_thread_runs_them() {
    let mock = provider(Vec::new()).await;
    let home = tempfile::tempdir().unwrap();
    let pid_dir = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&mock);
    overrides.extend(server_overrides("docs", &[]));
    overrides.push(format!(
        "mcp_servers.docs.env.MCP_TEST_PID_DIR=\"{}\"",
        pid_dir.path().display()
    ));
    // Only a kill ends it: proves the probe does not leave it behind on a closed stdin alone.
    overrides.push("mcp_servers.docs.env.MCP_TEST_IGNORE_EOF=\"1\"".to_string());
    overrides.extend(server_overrides("broken", &["exit-now"]));
    overrides.push("mcp_servers.missing.command=\"/nonexistent/mcp-server\"".to_string());
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;

    let listing = daemon.ok("mcpServerStatus/list", json!({})).await;
    let names: Vec<&str> = listing["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|server| server["name"].as_str())
        .collect();
    assert_eq!(names, vec!["broken", "docs", "missing"], "{listing}");

    let docs = by_name(&listing, "docs");
    assert_eq!(docs["serverInfo"]["name"], "openturn-test-server", "{docs}");
    assert_eq!(docs["runtimeStatus"], Value::Null, "{docs}");
    assert_eq!(docs["toolsError"], Value::Null, "{docs}");
    assert!(docs["serverCapabilities"]["tools"].is_object(), "{docs}");
    assert_eq!(
        docs["tools"]["echo"]["inputSchema"]["required"],
        json!(["text"]),
        "{docs}"
    );
    assert!(docs["tools"]["add"].is_object(), "{docs}");
    assert_eq!(docs["resources"][0]["uri"], "test://greeting", "{docs}");
    for failed in ["broken", "missing"] {
        let server = by_name(&listing, failed);
        assert_eq!(server["tools"], json!({}), "{server}");
        assert_eq!(server["serverInfo"], Value::Null, "{server}");
        assert!(
            server["toolsError"].as_str().is_some_and(|e| !e.is_empty()),
            "{server}"
        );
    }
    assert!(
        by_name(&listing, "missing")["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("/nonexistent/mcp-server")),
        "{listing}"
    );

    // The probe's process is gone once the answer is out.
    let first = pids_in(pid_dir.path());
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        poll_until(|| !running(first[0])).await,
        "the probed server {} outlived the listing",
        first[0]
    );

    // Asked again (one server by name), it is probed again and stopped again.
    let again = daemon
        .ok("mcpServerStatus/list", json!({"serverName": "docs"}))
        .await;
    assert_eq!(again["data"].as_array().map(Vec::len), Some(1), "{again}");
    assert_eq!(
        again["data"][0]["serverInfo"]["name"],
        "openturn-test-server"
    );
    let pids = pids_in(pid_dir.path());
    assert_eq!(pids.len(), 2, "{pids:?}");
    for pid in pids {
        assert!(poll_until(|| !running(pid)).await, "{pid} left running");
    }
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
}

#[tokio::test]
async fn a_slow_probe_does_not_hold_up_later_requests() {
    let mock = provider(Vec::new()).await;
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&mock);
    // The server waits far longer than the test allows before answering `initialize`; its
    // start-up timeout ends the probe.
    overrides.extend(server_overrides("sleepy", &["sleep-start", "60"]));
    overrides.push("mcp_servers.sleepy.startup_timeout_sec=4".to_string());
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let listing_id = daemon.send_request("mcpServerStatus/list", json!({})).await;
    // Sent after the listing, answered before it: the probe runs beside other requests.
    let config_id = daemon.send_request("config/read", json!({})).await;
    let first_answer = loop {
        let message = daemon.next_message().await;
        if message.get("id").is_some() && message.get("method").is_none() {
            break message;
        }
    };
    assert_eq!(first_answer["id"], config_id, "{first_answer}");
    let listing = daemon.response_to(listing_id).await;
    let sleepy = by_name(&listing["result"], "sleepy");
    assert!(
        sleepy["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("startup_timeout_sec")),
        "{sleepy}"
    );
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
}
