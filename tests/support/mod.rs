//! Test support: spawn the real `openturn` binary and talk JSON-RPC to it over stdio.
//! Every await is bounded by a timeout so a broken daemon fails the test instead of hanging it.

#![allow(dead_code)]

pub mod in_memory;
pub mod mcp;
pub mod outside_tmp;
pub mod raw_pipes;
pub mod schema;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

#[allow(unused_imports)] // Not every test binary uses every re-export.
pub use openturn::mock_provider::{self, MockProvider, Reply, Script};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A mock provider serving `replies` in order.
pub async fn provider(replies: Vec<Reply>) -> MockProvider {
    MockProvider::start(Script::new(replies)).await.unwrap()
}

/// Whether process `pid` is gone or a zombie (dead, not yet reaped).
pub fn process_is_dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Polls `check` until it holds, for at most [`TIMEOUT`]; true when it did. For a state that
/// announces itself with no event (a process leaving the process table), so the bound is the
/// suite's one and not a guess at how fast this machine is.
pub async fn poll_until(check: impl Fn() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while !check() {
        if tokio::time::Instant::now() >= deadline {
            return check();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// A daemon with an initialized connection against a provider with no replies (for requests
/// that never sample), and its home.
pub async fn daemon_without_replies() -> (Daemon, tempfile::TempDir) {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    (daemon, home)
}

/// Writes `text` to `path` as an executable (0755) script, from a short-lived `sh`: this
/// process never holds the file open for writing, so a child another test of the binary forks
/// at that moment cannot inherit such a descriptor and make the script's exec fail with
/// "Text file busy" (ETXTBSY).
pub fn write_executable(path: &Path, text: &str) {
    use std::io::Write;
    let mut writer = std::process::Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("spawn sh to write a script");
    writer
        .stdin
        .take()
        .expect("sh's stdin")
        .write_all(text.as_bytes())
        .expect("write the script to sh");
    let status = writer.wait().expect("wait for sh");
    assert!(
        status.success(),
        "writing {} failed: {status}",
        path.display()
    );
}

/// The built binary under test.
pub fn openturn_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_openturn"))
}

/// `-c` overrides that point the daemon at a mock provider with no retries unless asked.
pub fn mock_overrides(provider: &MockProvider) -> Vec<String> {
    vec![
        "model=\"gpt-5\"".to_string(),
        "model_provider=\"mock\"".to_string(),
        format!("model_providers.mock.base_url=\"{}\"", provider.base_url()),
        "model_providers.mock.name=\"mock\"".to_string(),
        "model_providers.mock.env_key=\"OPENTURN_TEST_KEY\"".to_string(),
        "model_providers.mock.request_max_retries=0".to_string(),
        "model_providers.mock.stream_max_retries=0".to_string(),
    ]
}

/// A running daemon and the lines it wrote.
pub struct Daemon {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines_rx: mpsc::UnboundedReceiver<Value>,
    /// Messages read while waiting for something else, in arrival order.
    backlog: VecDeque<Value>,
    /// Every message received, in order.
    pub transcript: Vec<Value>,
    next_id: i64,
    /// Method of each request sent through [`Daemon::request`] / [`Daemon::send_request`], so
    /// its response can be checked against the reference schema.
    methods_by_id: HashMap<String, String>,
    /// Check every received message against the reference schema (on by default; benchmarks
    /// turn it off so they time the daemon, not the checker).
    pub check_shapes: bool,
    /// What the daemon logged on stderr so far.
    stderr_lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Daemon {
    /// Spawns `openturn -c … app-server` with `OPENTURN_HOME=home`.
    pub fn spawn(home: &Path, overrides: &[String]) -> Daemon {
        Daemon::spawn_with_env(
            home,
            overrides,
            &[("OPENTURN_TEST_KEY", "sk-test-secret-key")],
        )
    }

    pub fn spawn_with_env(home: &Path, overrides: &[String], env: &[(&str, &str)]) -> Daemon {
        let mut command = Command::new(openturn_bin());
        for o in overrides {
            command.arg("-c").arg(o);
        }
        command
            .arg("app-server")
            .env("OPENTURN_HOME", home)
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        command.stderr(Stdio::piped());
        Daemon::from_command(command)
    }

    pub async fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin closed");
        stdin.write_all(line).await.expect("write");
        stdin.flush().await.expect("flush");
    }

    pub async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Closes stdin (EOF for the daemon).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    async fn read_next(&mut self) -> Value {
        let value = tokio::time::timeout(TIMEOUT, self.lines_rx.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "timed out waiting for the daemon; so far: {:#?}",
                    self.transcript
                )
            })
            .unwrap_or_else(|| panic!("daemon stdout closed; so far: {:#?}", self.transcript));
        if self.check_shapes {
            self.check_shape(&value);
        }
        self.transcript.push(value.clone());
        value
    }

    /// Every message must match the reference schema's shape for its kind.
    fn check_shape(&self, value: &Value) {
        assert_eq!(value["jsonrpc"], "2.0", "no jsonrpc member: {value}");
        let result = if value.get("method").is_some() {
            if value.get("id").is_some() {
                Ok(()) // Server→client requests are checked by the tests that answer them.
            } else {
                schema::check_notification(value)
            }
        } else if let Some(error) = value.get("error") {
            schema::check_error(error)
        } else {
            match self.methods_by_id.get(&value["id"].to_string()) {
                Some(method) => schema::check_response(method, &value["result"]),
                None => Ok(()),
            }
        };
        if let Err(problem) = result {
            panic!("message does not match the reference schema: {problem}\n{value}");
        }
    }

    /// The next message, backlog first.
    pub async fn next_message(&mut self) -> Value {
        match self.backlog.pop_front() {
            Some(value) => value,
            None => self.read_next().await,
        }
    }

    /// Sends a request and waits for its response (result or error), keeping other messages.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.response_to(id).await
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.methods_by_id
            .insert(json!(id).to_string(), method.to_string());
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        json!(id)
    }

    /// Waits for a notification with `method` (others go to the backlog).
    pub async fn notification(&mut self, method: &str) -> Value {
        if let Some(index) = self
            .backlog
            .iter()
            .position(|m| m["method"] == method && m.get("id").is_none())
        {
            return self.backlog.remove(index).unwrap_or(Value::Null);
        }
        loop {
            let value = self.read_next().await;
            if value["method"] == method && value.get("id").is_none() {
                return value;
            }
            self.backlog.push_back(value);
        }
    }

    /// The result of a request that must succeed.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// The error of a request that must fail.
    pub async fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} unexpectedly succeeded: {response}"),
        }
    }

    /// Drops messages waiting in the backlog.
    pub fn clear_backlog(&mut self) {
        self.backlog.clear();
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: signalling our own child process.
            unsafe {
                libc::kill(pid as i32, libc::SIGTERM);
            }
        }
    }

    /// Kills the daemon with SIGKILL and waits for it.
    pub async fn kill9(&mut self) {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(TIMEOUT, self.child.wait()).await;
    }

    /// Waits for the response with `id`; other messages go to the backlog.
    pub async fn response_to(&mut self, id: Value) -> Value {
        if let Some(index) = self
            .backlog
            .iter()
            .position(|m| m.get("id") == Some(&id) && m.get("method").is_none())
        {
            return self.backlog.remove(index).unwrap_or(Value::Null);
        }
        loop {
            let value = self.read_next().await;
            if value.get("id") == Some(&id) && value.get("method").is_none() {
                return value;
            }
            self.backlog.push_back(value);
        }
    }

    /// `initialize` + `initialized`.
    pub async fn initialize(&mut self) -> Value {
        let response = self
            .request(
                "initialize",
                json!({"clientInfo": {"name": "openturn-tests", "version": "1.0"}}),
            )
            .await;
        self.send(json!({"method": "initialized"})).await;
        response
    }

    /// `thread/start` with the given params; returns the thread id.
    pub async fn start_thread(&mut self, params: Value) -> String {
        let response = self.request("thread/start", params).await;
        response["result"]["thread"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("thread/start failed: {response}"))
            .to_string()
    }

    /// Collects messages until one satisfies `done` (inclusive).
    pub async fn collect_until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let value = self.next_message().await;
            let stop = done(&value);
            out.push(value);
            if stop {
                return out;
            }
        }
    }

    /// Messages up to and including `turn/completed` for any turn.
    pub async fn until_turn_completed(&mut self) -> Vec<Value> {
        self.collect_until(|m| m["method"] == "turn/completed")
            .await
    }

    /// The daemon's stderr lines so far.
    pub fn stderr(&self) -> Vec<String> {
        self.stderr_lines
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Closes stdin and asserts the daemon then exits with 0.
    pub async fn exit_cleanly(mut self) {
        self.close_stdin();
        assert_eq!(self.wait_exit().await, Some(0));
    }

    /// Waits for the process to exit and returns its status code.
    pub async fn wait_exit(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("daemon did not exit")
            .expect("wait");
        status.code()
    }
}

/// The method names of a message list, in order.
pub fn methods(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

/// All rollout files under `home/sessions`.
pub fn rollout_files(home: &Path) -> Vec<PathBuf> {
    files_under(&home.join("sessions"))
}

/// Every file below `root`, at any depth (none when `root` does not exist).
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// A reply that starts an assistant message, sends its deltas, then stalls forever (the
/// connection stays open, nothing more arrives): a turn stuck mid-item.
pub fn stalled_text_reply(item_id: &str, deltas: &[&str]) -> Reply {
    let mut events = mock_provider::ResponseBuilder::new("resp_stalled")
        .created()
        .text_message(item_id, deltas)
        .into_events();
    events.pop(); // The `output_item.done` never comes.
    let mut reply = mock_provider::SseReply::new(events);
    reply.fault = Some((usize::MAX, mock_provider::Fault::Stall));
    Reply::Sse(reply)
}

/// A complete text reply.
pub fn text_reply(n: usize, text: &str) -> Reply {
    Reply::Sse(mock_provider::simple_text_response(
        &format!("resp_{n}"),
        &format!("msg_{n}"),
        text,
        2,
    ))
}

/// The `input` array of the `n`th request the provider received.
pub fn request_input(provider: &MockProvider, n: usize) -> Vec<Value> {
    provider
        .requests()
        .get(n)
        .and_then(|r| r.body["input"].as_array().cloned())
        .unwrap_or_else(|| panic!("no request {n}"))
}

/// The one rollout file of a home that holds a single thread id.
pub fn rollout_of(home: &Path, thread_id: &str) -> PathBuf {
    rollout_files(home)
        .into_iter()
        .find(|p| p.to_string_lossy().contains(thread_id))
        .unwrap_or_else(|| panic!("no rollout for {thread_id}"))
}

/// Asserts that the rollout of `thread_id` records exactly one turn end, `interrupted` (it was
/// flushed before the daemon exited).
pub fn assert_one_turn_recorded_interrupted(home: &Path, thread_id: &str) {
    let rollout = std::fs::read_to_string(rollout_of(home, thread_id)).unwrap();
    let ended: Vec<Value> = rollout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "turn_ended")
        .collect();
    assert_eq!(ended.len(), 1, "{rollout}");
    assert_eq!(ended[0]["payload"]["status"], "interrupted", "{rollout}");
}

/// Sends a text turn and returns its messages up to `turn/completed`.
pub async fn text_turn(daemon: &mut Daemon, thread_id: &str, text: &str) -> Vec<Value> {
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]}),
        )
        .await;
    daemon.until_turn_completed().await
}

impl Daemon {
    /// Like [`Daemon::spawn_with_env`], with the daemon's stderr written to `stderr_path` (for
    /// tests that inspect its logs).
    pub fn spawn_logging_to(
        home: &Path,
        overrides: &[String],
        env: &[(&str, &str)],
        stderr_path: &Path,
    ) -> Daemon {
        let stderr = std::fs::File::create(stderr_path)
            .unwrap_or_else(|e| panic!("create {}: {e}", stderr_path.display()));
        let mut command = Command::new(openturn_bin());
        for o in overrides {
            command.arg("-c").arg(o);
        }
        command
            .arg("app-server")
            .env("OPENTURN_HOME", home)
            .env_remove("OPENAI_API_KEY")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .kill_on_drop(true);
        Daemon::from_command(command)
    }

    /// Spawns a prepared command (stdin and stdout must be piped) and starts reading its stdout;
    /// a piped stderr is echoed with a prefix and kept for tests that inspect the logs.
    pub fn from_command(mut command: Command) -> Daemon {
        let mut child = command.spawn().expect("spawn openturn");
        let stdout = child.stdout.take().expect("no stdout");
        let stdin = child.stdin.take();
        let stderr_lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(stderr) = child.stderr.take() {
            let stderr_sink = stderr_lines.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    eprintln!("[openturn] {line}");
                    if let Ok(mut sink) = stderr_sink.lock() {
                        sink.push(line);
                    }
                }
            });
        }
        let (lines_tx, lines_rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("daemon wrote a non-JSON line {line:?}: {e}"));
                if lines_tx.send(value).is_err() {
                    return;
                }
            }
        });
        Daemon {
            child,
            stdin,
            lines_rx,
            backlog: VecDeque::new(),
            transcript: Vec::new(),
            next_id: 1,
            methods_by_id: HashMap::new(),
            check_shapes: true,
            stderr_lines,
        }
    }
}
