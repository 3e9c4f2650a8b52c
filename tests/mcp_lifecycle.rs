//! MCP servers' lives and secrets, through the real binary: an `env` value reaches the server's
//! process and nothing else (notifications, responses, logs, rollouts); the server's process
//! ends with the daemon, fast, and with its thread when the thread unloads; `exec --json` shows
//! an MCP call as an `mcp_tool_call` item; a streamable HTTP server gets its bearer token, read
//! from the named variable, and nothing else sees it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use exec_support::*;
use serde_json::{json, Value};
use support::mcp::{server_overrides, server_script};
use support::*;
use turn_support::*;

const SECRET: &str = "s3cr3t-mcp-value-4242";

/// A function call of `tool` in `namespace`, as its `done` event only.
fn namespaced_call(
    response: ResponseBuilder,
    item_id: &str,
    call_id: &str,
    namespace: &str,
    tool: &str,
) -> ResponseBuilder {
    response.output_item_done(
        json!({"type": "function_call", "id": item_id, "call_id": call_id,
        "name": tool, "namespace": namespace, "arguments": "{}"}),
    )
}

async fn wait_ready(daemon: &mut Daemon, name: &str) {
    loop {
        let status = daemon.notification("mcpServer/startupStatus/updated").await;
        if status["params"]["name"] == name && status["params"]["status"] != "starting" {
            assert_eq!(status["params"]["status"], "ready", "{status}");
            return;
        }
    }
}

/// The pid the test server wrote into `dir`, waiting (bounded) for it to appear.
async fn server_pid(dir: &Path) -> i32 {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let found = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .find_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok());
        if let Some(pid) = found {
            return pid;
        }
        assert!(Instant::now() < deadline, "the server never wrote its pid");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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

async fn gone_within(pid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !running(pid)
}

#[tokio::test]
async fn an_env_value_reaches_the_server_and_no_output_of_the_daemon() {
    let first = ResponseBuilder::new("r1")
        .created()
        .with(|b| namespaced_call(b, "fc_1", "call_env", "mcp__docs", "env"))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["ok"]);
    let mut overrides = server_overrides("docs", &[]);
    overrides.push(format!("mcp_servers.docs.env.MCP_TEST_SECRET=\"{SECRET}\""));
    let extra: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let mut s = session(
        Script::new([first, second]),
        &extra,
        json!({"approvalPolicy": "never"}),
    )
    .await;
    wait_ready(&mut s.daemon, "docs").await;
    let turn = s.run_turn("check").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert!(outputs[0].1.ends_with("secret present"), "{outputs:?}");
    let config = s.daemon.ok("config/read", json!({})).await;
    s.daemon
        .ok("mcpServerStatus/list", json!({"threadId": s.thread_id}))
        .await;
    assert_eq!(
        config["config"]["mcp_servers"]["docs"]["env"]["MCP_TEST_SECRET"], "<redacted>",
        "{config}"
    );

    let stdout = serde_json::to_string(&s.daemon.transcript).unwrap_or_default();
    assert!(!stdout.contains(SECRET), "the secret reached the client");
    assert!(
        !s.daemon.stderr().iter().any(|line| line.contains(SECRET)),
        "the secret reached the log"
    );
    for file in rollout_files(s.home.path()) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains(SECRET),
            "the secret reached {}",
            file.display()
        );
    }
}

#[tokio::test]
async fn a_servers_process_ends_with_the_daemon_and_the_daemon_still_exits_fast() {
    let pids = tempfile::tempdir().unwrap();
    let mut overrides = server_overrides("docs", &[]);
    overrides.push(format!(
        "mcp_servers.docs.env.MCP_TEST_PID_DIR=\"{}\"",
        pids.path().display()
    ));
    // The server outlives a closed stdin: only a kill ends it.
    overrides.push("mcp_servers.docs.env.MCP_TEST_IGNORE_EOF=\"1\"".to_string());
    let extra: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let mut s = session(Script::new([]), &extra, json!({})).await;
    wait_ready(&mut s.daemon, "docs").await;
    let pid = server_pid(pids.path()).await;
    assert!(running(pid));
    let clock = Instant::now();
    s.daemon.close_stdin();
    let code = s.daemon.wait_exit().await;
    assert_eq!(code, Some(0));
    assert!(
        clock.elapsed() < Duration::from_secs(5),
        "shutdown waited on the MCP server: {:?}",
        clock.elapsed()
    );
    assert!(
        gone_within(pid, TIMEOUT).await,
        "the MCP server outlived the daemon"
    );
}

#[tokio::test]
async fn a_servers_process_ends_when_its_thread_unloads() {
    let pids = tempfile::tempdir().unwrap();
    let mut overrides = server_overrides("docs", &[]);
    overrides.push(format!(
        "mcp_servers.docs.env.MCP_TEST_PID_DIR=\"{}\"",
        pids.path().display()
    ));
    overrides.push("mcp_servers.docs.env.MCP_TEST_IGNORE_EOF=\"1\"".to_string());
    overrides.push("thread_unload_delay_secs=0".to_string());
    let extra: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let mut s = session(Script::new([]), &extra, json!({})).await;
    wait_ready(&mut s.daemon, "docs").await;
    let pid = server_pid(pids.path()).await;
    s.daemon
        .ok("thread/unsubscribe", json!({"threadId": s.thread_id}))
        .await;
    s.daemon.notification("thread/closed").await;
    assert!(
        gone_within(pid, TIMEOUT).await,
        "the MCP server outlived its thread"
    );
}

#[tokio::test]
async fn exec_json_shows_an_mcp_call_as_an_mcp_tool_call_item() {
    let home = tempfile::tempdir().unwrap();
    let first = ResponseBuilder::new("r1")
        .created()
        .with(|b| namespaced_call(b, "fc_1", "call_p", "mcp__docs", "progress"))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Done."]);
    let mock = MockProvider::start(Script::new([first, second]))
        .await
        .unwrap();
    let overrides = server_overrides("docs", &[]);
    let mut args: Vec<&str> = vec!["--json", "-c", "approval_policy=\"never\""];
    for o in &overrides {
        args.push("-c");
        args.push(o);
    }
    args.push("make progress");
    let run = exec(home.path(), &mock, &args, "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let mcp: Vec<&Value> = events
        .iter()
        .filter(|e| e["item"]["type"] == "mcp_tool_call")
        .collect();
    assert_eq!(mcp.len(), 2, "{events:#?}");
    assert_eq!(mcp[0]["type"], "item.started");
    assert_eq!(mcp[0]["item"]["server"], "docs");
    assert_eq!(mcp[0]["item"]["tool"], "progress");
    assert_eq!(mcp[0]["item"]["status"], "in_progress");
    assert_eq!(mcp[1]["type"], "item.completed");
    assert_eq!(mcp[1]["item"]["status"], "completed");
    assert_eq!(
        mcp[1]["item"]["result"]["content"],
        json!([{"type": "text", "text": "progressed"}])
    );
}

/// The test server in its streamable HTTP mode, on a loopback port; killed when dropped.
async fn http_server(dir: &Path) -> (tokio::process::Child, u16, PathBuf) {
    let port_file = dir.join("port");
    let log = dir.join("http.log");
    let child = tokio::process::Command::new("python3")
        .arg(server_script())
        .arg("http")
        .arg(&port_file)
        .env("MCP_TEST_LOG", &log)
        .kill_on_drop(true)
        .spawn()
        .expect("python3");
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(port) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|text| text.trim().parse::<u16>().ok())
        {
            return (child, port, log);
        }
        assert!(Instant::now() < deadline, "the HTTP server never listened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_streamable_http_server_gets_the_bearer_token_from_its_variable_and_nothing_else_does() {
    const TOKEN: &str = "http-bearer-7781-secret";
    const HEADER: &str = "editor-header-5150-secret";
    let dir = tempfile::tempdir().unwrap();
    let (_server, port, log) = http_server(dir.path()).await;
    let first = ResponseBuilder::new("r1")
        .created()
        .with(|b| namespaced_call(b, "fc_1", "call_h", "mcp__web", "env"))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["ok"]);
    let provider = MockProvider::start(Script::new([first, second]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.push(format!(
        "mcp_servers.web.url=\"http://127.0.0.1:{port}/mcp\""
    ));
    overrides.push("mcp_servers.web.bearer_token_env_var=\"MCP_WEB_TOKEN\"".to_string());
    // How an editor's headers arrive through the ACP bridge.
    overrides.push(format!(
        "mcp_servers.web.http_headers.X-Editor-Key=\"{HEADER}\""
    ));
    let mut daemon = Daemon::spawn_with_env(
        home.path(),
        &overrides,
        &[("OPENTURN_TEST_KEY", "sk-test"), ("MCP_WEB_TOKEN", TOKEN)],
    );
    daemon.initialize().await;
    let thread_id = daemon
        .start_thread(json!({"approvalPolicy": "never"}))
        .await;
    wait_ready(&mut daemon, "web").await;
    let turn = text_turn(&mut daemon, &thread_id, "go").await;
    let completed = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(completed[0]["server"], "web");
    assert_eq!(completed[0]["status"], "completed", "{turn:#?}");
    let listed = daemon
        .ok("mcpServerStatus/list", json!({"threadId": thread_id}))
        .await;
    assert_eq!(
        listed["data"][0]["httpOrigin"],
        format!("http://127.0.0.1:{port}")
    );
    assert_eq!(listed["data"][0]["authStatus"], "bearerToken");

    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        seen.contains(&format!("authorization: Bearer {TOKEN}")),
        "the server never got the token: {seen}"
    );
    assert!(seen.contains(&format!("x-editor-key: {HEADER}")), "{seen}");
    daemon.ok("config/read", json!({})).await;
    let stdout = serde_json::to_string(&daemon.transcript).unwrap_or_default();
    for secret in [TOKEN, HEADER] {
        assert!(!stdout.contains(secret));
        assert!(!daemon.stderr().iter().any(|line| line.contains(secret)));
        for file in rollout_files(home.path()) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            assert!(!text.contains(secret));
        }
    }
}
