//! The ACP client every bridge test shares (`tests/acp_bridge*.rs`): the pinned bridge's entry
//! point, a client speaking ACP to it over stdio, the wrapper script that records the bridge's
//! app-server traffic, and the lookups over what the bridge sent.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::support::*;

pub const BRIDGE: &str = "tests/acp/node_modules/@agentclientprotocol/codex-acp/dist/index.js";

/// The bridge's entry point, or why the test cannot run here.
pub fn bridge_entry() -> Result<PathBuf, String> {
    let entry = Path::new(env!("CARGO_MANIFEST_DIR")).join(BRIDGE);
    if !entry.is_file() {
        return Err(format!(
            "{} is missing: run scripts/test (it installs the bridge with npm)",
            entry.display()
        ));
    }
    match std::process::Command::new("node").arg("--version").output() {
        Ok(output) if output.status.success() => Ok(entry),
        _ => Err("node is not on PATH".to_string()),
    }
}

/// The bridge's entry point, or `None` once it has said why the test cannot run here; under
/// `CI=true` that fails the test instead, since CI must never silently stop running the bridge.
pub fn bridge_or_skip() -> Option<PathBuf> {
    match bridge_entry() {
        Ok(entry) => Some(entry),
        Err(reason) => {
            assert!(
                std::env::var("CI").map(|v| v != "true").unwrap_or(true),
                "CI=true but the ACP bridge cannot run: {reason}"
            );
            eprintln!("skipping: {reason}");
            None
        }
    }
}

/// An ACP client: one bridge process, JSON-RPC lines on its stdin/stdout. Permission requests
/// are answered with the first "allow" option; any other agent → client request gets
/// "method not found" (the client announces no file-system or terminal capability).
pub struct AcpClient {
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines_rx: mpsc::UnboundedReceiver<Value>,
    pub backlog: VecDeque<Value>,
    pub next_id: i64,
    /// Every message from the bridge, in order.
    pub transcript: Vec<Value>,
    /// The `session/request_permission` requests answered so far.
    pub permission_requests: Vec<Value>,
    pub stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Where the wrapper writes the pids of its `tee`s (`tee.pids`) and their logs.
    pub home: PathBuf,
}

impl AcpClient {
    pub fn spawn(entry: &Path, home: &Path) -> AcpClient {
        let mut command = Command::new("node");
        command
            .arg(entry)
            .env("CODEX_PATH", traffic_recorder(home))
            .env("OPENTURN_HOME", home)
            // The bridge's own logs and state stay inside the test's folder.
            .env("HOME", home)
            .env("NO_BROWSER", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("CODEX_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawning node");
        let stdin = child.stdin.take().expect("no stdin");
        let stdout = child.stdout.take().expect("no stdout");
        let stderr = child.stderr.take().expect("no stderr");
        let (lines_tx, lines_rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                match serde_json::from_str::<Value>(&line) {
                    Ok(value) => {
                        if lines_tx.send(value).is_err() {
                            break;
                        }
                    }
                    Err(error) => panic!("the bridge wrote a non-JSON line ({error}): {line}"),
                }
            }
        });
        let stderr_lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = stderr_lines.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut sink) = sink.lock() {
                    sink.push(line);
                }
            }
        });
        AcpClient {
            child,
            stdin,
            lines_rx,
            backlog: VecDeque::new(),
            next_id: 1,
            transcript: Vec::new(),
            permission_requests: Vec::new(),
            stderr: stderr_lines,
            home: home.to_path_buf(),
        }
    }

    pub fn context(&self) -> String {
        let stderr = self.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
        format!(
            "bridge stderr:\n{stderr}\nmessages so far:\n{:#?}",
            self.transcript
        )
    }

    pub async fn write(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .await
            .expect("write to the bridge");
        self.stdin.flush().await.unwrap();
    }

    /// The next message that is not an agent → client request (those are answered here).
    pub async fn next(&mut self) -> Value {
        if let Some(value) = self.backlog.pop_front() {
            return value;
        }
        loop {
            let value = match tokio::time::timeout(TIMEOUT, self.lines_rx.recv()).await {
                Ok(Some(value)) => value,
                Ok(None) => panic!("the bridge closed stdout\n{}", self.context()),
                Err(_) => panic!("timed out waiting for the bridge\n{}", self.context()),
            };
            self.transcript.push(value.clone());
            if value.get("method").is_some() && value.get("id").is_some() {
                self.answer_agent_request(&value).await;
                continue;
            }
            return value;
        }
    }

    pub async fn answer_agent_request(&mut self, request: &Value) {
        let id = request["id"].clone();
        if request["method"] == "session/request_permission" {
            let option = request["params"]["options"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|o| o["kind"] == "allow_once")
                .or_else(|| request["params"]["options"].get(0))
                .map(|o| o["optionId"].clone())
                .unwrap_or(Value::Null);
            self.permission_requests.push(request.clone());
            self.write(json!({"jsonrpc": "2.0", "id": id,
                "result": {"outcome": {"outcome": "selected", "optionId": option}}}))
                .await;
        } else {
            self.write(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "not offered by this test client"}}))
                .await;
        }
    }

    pub async fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Waits for the response to `id`; notifications read meanwhile are returned with it.
    pub async fn response_to(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == id {
                return (message, seen);
            }
            seen.push(message);
        }
    }

    /// A request that must succeed: its result and the notifications before it.
    pub async fn ok(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.send_request(method, params).await;
        let (response, seen) = self.response_to(id).await;
        match response.get("result") {
            Some(result) => (result.clone(), seen),
            None => panic!("{method} failed: {response}\n{}", self.context()),
        }
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// `session/new` in `cwd`, with no MCP servers of the editor's; the new session's id.
    pub async fn new_session(&mut self, cwd: &str) -> String {
        let (session, _) = self
            .ok("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        session["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no sessionId: {session}"))
            .to_string()
    }

    pub async fn initialize(&mut self) -> Value {
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false},
            "clientInfo": {"name": "openturn-acp-test", "version": "1.0.0"},
        });
        self.ok("initialize", params).await.0
    }

    /// Closes the bridge and waits for it, then for the wrapper's `tee`s, so the traffic logs
    /// are complete.
    pub async fn shutdown(mut self) {
        drop(self.stdin);
        if tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
        let deadline = std::time::Instant::now() + TIMEOUT;
        while tee_pids(&self.home).into_iter().any(running) {
            assert!(
                std::time::Instant::now() < deadline,
                "the wrapper's tees did not end after the bridge"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

/// A `CODEX_PATH` script that runs the real openturn binary with the bridge's arguments and
/// copies both directions of the app-server traffic into `home/bridge-in.jsonl` and
/// `home/bridge-out.jsonl`, so the test can check every call the bridge made was answered. It
/// logs the way users wrap agent binaries, with `exec` and process substitution, so the `tee`s
/// are the daemon's own children; their pids go to `home/tee.pids`.
pub fn traffic_recorder(home: &Path) -> PathBuf {
    let script = home.join("openturn-recorded");
    let text = format!(
        "#!/bin/bash
exec '{bin}' \"$@\" \\
  < <(echo $BASHPID >> '{home}/tee.pids'; exec tee -a '{home}/bridge-in.jsonl') \\
  > >(echo $BASHPID >> '{home}/tee.pids'; exec tee -a '{home}/bridge-out.jsonl')\n",
        home = home.display(),
        bin = openturn_bin().display(),
    );
    write_executable(&script, &text);
    script
}

/// The pids of every `tee` the wrapper started so far.
pub fn tee_pids(home: &Path) -> Vec<u32> {
    std::fs::read_to_string(home.join("tee.pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// `(state, parent)` of a process, `None` when it is gone.
pub fn process_status(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}

/// Alive and not a zombie.
pub fn running(pid: u32) -> bool {
    process_status(pid).is_some_and(|(state, _)| !matches!(state, 'Z' | 'X'))
}

/// The JSON lines of a recorded traffic file.
pub fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// What openturn sent the bridge (the wrapper's `home/bridge-out.jsonl`), once it is checked
/// that none of it is an error answer: every app-server call the bridge made succeeded.
pub fn answers_without_errors(home: &Path) -> Vec<Value> {
    let answers = recorded(&home.join("bridge-out.jsonl"));
    assert!(
        answers.iter().all(|m| m.get("error").is_none()),
        "{answers:#?}"
    );
    answers
}

/// The `session/update` payloads of `kind` among `messages`.
pub fn updates<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| &m["params"]["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

pub fn chunk_text(updates: &[&Value]) -> String {
    updates
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// `config.toml` pointing openturn at the mock provider (no key needed), with the test MCP
/// server configured as `kb`.
pub fn write_config(home: &Path, provider: &MockProvider) {
    let config = format!(
        "model = \"gpt-5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\n\
         base_url = \"{}\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n\
         [mcp_servers.kb]\ncommand = \"python3\"\nargs = [{}]\n",
        provider.base_url(),
        serde_json::to_string(&crate::support::mcp::server_script()).unwrap(),
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
}
