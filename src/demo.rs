//! `openturn demo`: the main job, offline. Starts the loopback mock provider replaying the
//! transcripts shipped in `transcripts/` (embedded at build time), spawns `openturn app-server`
//! as a real child process, drives a short session over stdio exactly as an editor would, and
//! prints a readable live transcript of what the daemon sends.
//!
//! This is a client of the daemon: it knows JSON-RPC lines and the mock provider, nothing else.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::mock_provider::{MockProvider, Script, ScriptError};

/// The shipped transcripts, replayed in this order: one reply per sampling request.
const TRANSCRIPTS: [(&str, &str); 3] = [
    ("demo_hello", include_str!("../transcripts/demo_hello.json")),
    (
        "demo_reasoning",
        include_str!("../transcripts/demo_reasoning.json"),
    ),
    ("demo_tool", include_str!("../transcripts/demo_tool.json")),
];

/// The prompts of the scripted session, one turn each.
const PROMPTS: [&str; 3] = [
    "Say hello to the person trying openturn.",
    "Think it over: what should we check first?",
    "Run a command that greets us.",
];

/// What the demo suggests trying next: a turn of the user's own against the built-in `demo`
/// provider, with an approval and a file edit.
pub const NEXT_COMMAND: &str = "openturn -c model_provider=demo exec \"give me the tour\"";

/// No single wait in the demo may take longer than this.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("a shipped transcript is invalid ({name}): {source}")]
    Transcript {
        name: &'static str,
        #[source]
        source: ScriptError,
    },
    #[error("demo I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the daemon did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the daemon closed its output unexpectedly")]
    DaemonGone,
    #[error("the daemon wrote a line that is not JSON: {0}")]
    BadLine(String),
    #[error("request `{method}` failed: {error}")]
    Request { method: String, error: Value },
}

/// Runs the scripted session; `out` receives the transcript.
pub async fn run(
    daemon_exe: &Path,
    out: &mut (dyn std::io::Write + Send),
) -> Result<(), DemoError> {
    let mut replies = Vec::new();
    for (name, text) in TRANSCRIPTS {
        let script =
            Script::from_json_str(text).map_err(|source| DemoError::Transcript { name, source })?;
        replies.extend(script.replies);
    }
    let provider = MockProvider::start(Script::new(replies)).await?;
    let home = TempHome::create()?;
    writeln!(
        out,
        "openturn demo — offline; a loopback provider at {} replays shipped transcripts",
        provider.base_url()
    )?;
    writeln!(out, "daemon home: {}\n", home.path.display())?;
    let mut session = Session::spawn(daemon_exe, &home.path, &provider.base_url())?;
    let result = drive(&mut session, out).await;
    session.finish().await;
    provider.shutdown().await;
    result
}

async fn drive(
    session: &mut Session,
    out: &mut (dyn std::io::Write + Send),
) -> Result<(), DemoError> {
    let init = session
        .request("initialize", json!({"clientInfo": {"name": "openturn-demo", "title": "openturn demo", "version": env!("CARGO_PKG_VERSION")}}), out)
        .await?;
    // openturn's own version and the protocol it speaks are two different numbers: each is
    // named, so neither is mistaken for the other.
    writeln!(
        out,
        "→ initialize\n← openturn {} · protocol {}",
        init["openturnVersion"].as_str().unwrap_or("?"),
        init["protocolVersion"].as_str().unwrap_or("?")
    )?;
    session.notify("initialized").await?;
    let started = session
        .request(
            "thread/start",
            json!({"approvalPolicy": "never", "sandbox": "workspace-write"}),
            out,
        )
        .await?;
    let thread_id = started["thread"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    writeln!(
        out,
        "→ thread/start\n← thread {thread_id} (model {})",
        started["model"].as_str().unwrap_or("?")
    )?;
    for prompt in PROMPTS {
        writeln!(out, "\n→ turn/start")?;
        writeln!(out, "you › {prompt}")?;
        session
            .request(
                "turn/start",
                json!({"threadId": thread_id, "input": [{"type": "text", "text": prompt}]}),
                out,
            )
            .await?;
        session.until_turn_completed(out).await?;
    }
    writeln!(
        out,
        "\ndone: 3 turns streamed, rollout written under the demo home (removed on exit)"
    )?;
    writeln!(
        out,
        "\nnext, the same offline and without a key, one turn of your own:\n  {NEXT_COMMAND}"
    )?;
    Ok(())
}

/// A spawned daemon and the demo's side of its stdio.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    printer: Printer,
}

impl Session {
    fn spawn(exe: &Path, home: &Path, base_url: &str) -> Result<Session, DemoError> {
        let mut child = Command::new(exe)
            .args([
                "-c",
                "model=\"gpt-5-mini\"",
                "-c",
                "model_provider=\"demo\"",
            ])
            .arg("-c")
            .arg(format!("model_providers.demo.base_url=\"{base_url}\""))
            .args([
                "-c",
                "model_providers.demo.name=\"offline demo\"",
                "-c",
                "model_providers.demo.request_max_retries=0",
            ])
            .arg("app-server")
            .env("OPENTURN_HOME", home)
            // Keep the transcript readable: the daemon's informational logs stay quiet unless
            // the user asked for them.
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_string()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().ok_or(DemoError::DaemonGone)?;
        let stdin = child.stdin.take();
        Ok(Session {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 0,
            printer: Printer::default(),
        })
    }

    async fn send(&mut self, message: Value) -> Result<(), DemoError> {
        let stdin = self.stdin.as_mut().ok_or(DemoError::DaemonGone)?;
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        stdin.write_all(&line).await?;
        stdin.flush().await?;
        Ok(())
    }

    async fn notify(&mut self, method: &str) -> Result<(), DemoError> {
        self.send(json!({"method": method})).await
    }

    async fn next(&mut self) -> Result<Value, DemoError> {
        let line = tokio::time::timeout(STEP_TIMEOUT, self.lines.next_line())
            .await
            .map_err(|_| DemoError::Timeout(STEP_TIMEOUT))??
            .ok_or(DemoError::DaemonGone)?;
        serde_json::from_str(&line).map_err(|_| DemoError::BadLine(line))
    }

    /// Sends a request and returns its result, rendering anything that arrives meanwhile.
    async fn request(
        &mut self,
        method: &str,
        params: Value,
        out: &mut (dyn std::io::Write + Send),
    ) -> Result<Value, DemoError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await?;
        loop {
            let message = self.next().await?;
            if message["id"] == json!(id) && message.get("method").is_none() {
                if let Some(error) = message.get("error") {
                    return Err(DemoError::Request {
                        method: method.to_string(),
                        error: error.clone(),
                    });
                }
                return Ok(message["result"].clone());
            }
            self.handle(message, out).await?;
        }
    }

    async fn until_turn_completed(
        &mut self,
        out: &mut (dyn std::io::Write + Send),
    ) -> Result<(), DemoError> {
        loop {
            let message = self.next().await?;
            let done = message["method"] == "turn/completed";
            self.handle(message, out).await?;
            if done {
                return Ok(());
            }
        }
    }

    /// Renders a notification, or answers a server request the way a trusting editor would.
    async fn handle(
        &mut self,
        message: Value,
        out: &mut (dyn std::io::Write + Send),
    ) -> Result<(), DemoError> {
        let method = message["method"].as_str().unwrap_or_default().to_string();
        if let Some(id) = message.get("id").filter(|_| !method.is_empty()) {
            let reply = match method.as_str() {
                "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                    writeln!(
                        out,
                        "  ? approval requested for {} → accept",
                        message["params"]["command"].as_str().unwrap_or("a change")
                    )?;
                    json!({"decision": "accept"})
                }
                _ => {
                    json!({"contentItems": [{"type": "inputText", "text": "the demo client has no tools"}], "success": false})
                }
            };
            return self.send(json!({"id": id, "result": reply})).await;
        }
        self.printer.render(&method, &message["params"], out)?;
        out.flush()?;
        Ok(())
    }

    /// Closes stdin (the daemon shuts down on EOF) and waits briefly for it to exit.
    async fn finish(&mut self) {
        self.stdin = None;
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Turns notifications into a readable, live transcript.
#[derive(Default)]
struct Printer {
    /// True while a streamed line (assistant text, reasoning) is open.
    streaming: bool,
}

impl Printer {
    fn render(
        &mut self,
        method: &str,
        params: &Value,
        out: &mut (dyn std::io::Write + Send),
    ) -> std::io::Result<()> {
        let item = &params["item"];
        match method {
            "item/started" if item["type"] == "agentMessage" => self.open(out, "assistant › ")?,
            "item/started" if item["type"] == "reasoning" => self.open(out, "reasoning › ")?,
            "item/started" if item["type"] == "commandExecution" => {
                writeln!(out, "  $ {}", item["command"].as_str().unwrap_or_default())?
            }
            "item/agentMessage/delta"
            | "item/reasoning/summaryTextDelta"
            | "item/commandExecution/outputDelta" => {
                write!(out, "{}", params["delta"].as_str().unwrap_or_default())?
            }
            "item/reasoning/summaryPartAdded"
                if params["summaryIndex"].as_i64().unwrap_or(0) > 0 =>
            {
                write!(out, " / ")?
            }
            "item/completed"
                if matches!(item["type"].as_str(), Some("agentMessage" | "reasoning")) =>
            {
                self.close(out)?
            }
            "item/completed" if item["type"] == "commandExecution" => writeln!(
                out,
                "  ⏎ {} (exit {})",
                item["status"].as_str().unwrap_or("?"),
                item["exitCode"]
            )?,
            "thread/tokenUsage/updated" => writeln!(
                out,
                "  · tokens: {} this response, {} in the thread",
                params["tokenUsage"]["last"]["totalTokens"],
                params["tokenUsage"]["total"]["totalTokens"]
            )?,
            "model/rerouted" => writeln!(
                out,
                "  · served by {}",
                params["toModel"].as_str().unwrap_or("?")
            )?,
            "warning" => writeln!(
                out,
                "  ! {}",
                params["message"].as_str().unwrap_or_default()
            )?,
            "error" => writeln!(
                out,
                "  ✗ {}",
                params["error"]["message"].as_str().unwrap_or_default()
            )?,
            "turn/completed" => {
                self.close(out)?;
                writeln!(
                    out,
                    "← turn {} in {} ms",
                    params["turn"]["status"].as_str().unwrap_or("?"),
                    params["turn"]["durationMs"]
                )?
            }
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, out: &mut (dyn std::io::Write + Send), label: &str) -> std::io::Result<()> {
        self.close(out)?;
        write!(out, "{label}")?;
        self.streaming = true;
        Ok(())
    }

    fn close(&mut self, out: &mut (dyn std::io::Write + Send)) -> std::io::Result<()> {
        if self.streaming {
            writeln!(out)?;
            self.streaming = false;
        }
        Ok(())
    }
}

/// A private temporary `$OPENTURN_HOME`, removed on drop.
struct TempHome {
    path: PathBuf,
}

impl TempHome {
    fn create() -> std::io::Result<TempHome> {
        let path =
            std::env::temp_dir().join(format!("openturn-demo-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path)?;
        Ok(TempHome { path })
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
