//! An in-memory connection to `server::serve`: the daemon's whole server runs in the test's
//! process, over two `tokio::io::duplex` pipes instead of stdio. For component tests that need
//! what a child process cannot give: a paused clock, a counting allocator, a look at the server
//! without the cost of spawning it. End-to-end behaviour is still tested through the binary.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

use openturn::config::Config;

use super::{mock_overrides, MockProvider, TIMEOUT};

/// Bytes each pipe buffers before its writer waits, like a pipe's capacity.
const PIPE_CAPACITY: usize = 64 * 1024;

/// A served connection and the client's ends of its pipes.
pub struct InMemory {
    to_server: Option<DuplexStream>,
    from_server: Lines<BufReader<DuplexStream>>,
    pub server: JoinHandle<Result<(), openturn::core::CoreError>>,
    backlog: VecDeque<Value>,
    next_id: i64,
    /// How long one read may wait: [`TIMEOUT`] unless set with [`InMemory::with_timeout`].
    timeout: Duration,
}

/// The configuration the binary would load from `home` with `-c` overrides pointing at
/// `provider` (plus `extra`).
pub fn mock_config(home: &Path, provider: &MockProvider, extra: &[&str]) -> Config {
    std::env::set_var("OPENTURN_TEST_KEY", "sk-test-secret-key");
    let mut overrides = mock_overrides(provider);
    overrides.extend(extra.iter().map(|o| o.to_string()));
    Config::load(home, &overrides).expect("config")
}

impl InMemory {
    /// Serves `config` on the current runtime.
    pub fn start(config: Config) -> InMemory {
        InMemory::start_on(&tokio::runtime::Handle::current(), config)
    }

    /// Serves `config` on `runtime` (the client side stays wherever the caller runs).
    pub fn start_on(runtime: &tokio::runtime::Handle, config: Config) -> InMemory {
        let (to_server, server_input) = tokio::io::duplex(PIPE_CAPACITY);
        let (server_output, from_server) = tokio::io::duplex(PIPE_CAPACITY);
        let server = runtime.spawn(openturn::server::serve(config, server_input, server_output));
        InMemory {
            to_server: Some(to_server),
            from_server: BufReader::new(from_server).lines(),
            server,
            backlog: VecDeque::new(),
            next_id: 1,
            timeout: TIMEOUT,
        }
    }

    /// Sets how long one read may wait. Under a paused clock the read's own timeout is a timer
    /// like any other, and the clock jumps to the earliest one: it must lie beyond the virtual
    /// waits the test expects.
    pub fn with_timeout(mut self, timeout: Duration) -> InMemory {
        self.timeout = timeout;
        self
    }

    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let to_server = self.to_server.as_mut().expect("input already closed");
        to_server.write_all(&line).await.expect("write");
    }

    /// Closes the server's input (EOF: the server shuts down).
    pub fn close_input(&mut self) {
        self.to_server = None;
    }

    async fn read_next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(self.timeout, self.from_server.next_line())
            .await
            .expect("timed out waiting for the server")
            .expect("read")?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
    }

    /// The next message (backlog first); `None` once the server closed its output.
    pub async fn next_message(&mut self) -> Option<Value> {
        match self.backlog.pop_front() {
            Some(value) => Some(value),
            None => self.read_next().await,
        }
    }

    /// Sends a request and waits for its response, keeping other messages in the backlog.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self
                .read_next()
                .await
                .unwrap_or_else(|| panic!("output closed before the response to {method}"));
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            self.backlog.push_back(message);
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

    /// `thread/start`; returns the thread id.
    pub async fn start_thread(&mut self) -> String {
        let response = self.request("thread/start", json!({})).await;
        response["result"]["thread"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("thread/start failed: {response}"))
            .to_string()
    }

    /// Messages up to and including the first that satisfies `done`.
    pub async fn collect_until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(message) = self.next_message().await {
            let last = done(&message);
            out.push(message);
            if last {
                return out;
            }
        }
        panic!("output closed before the awaited message; got {out:#?}");
    }

    /// Closes the input and waits for `serve` to return.
    pub async fn shut_down(mut self) {
        self.close_input();
        while self.read_next().await.is_some() {}
        tokio::time::timeout(self.timeout, &mut self.server)
            .await
            .expect("serve did not return after EOF")
            .expect("server task")
            .expect("serve");
    }
}
