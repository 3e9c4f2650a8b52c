//! One daemon under measurement: how to spawn it (openturn or the reference) pointed at the
//! loopback provider, a minimal JSON-RPC client over its stdio, and its resource counters from
//! `/proc`.
//!
//! The client is deliberately cheap: every stdout line is timestamped the moment it is read, and
//! `item/agentMessage/delta` lines are recognised by a substring search instead of being parsed,
//! so the driver's own CPU stays small next to the daemon's on a shared machine.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::LazyLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use memchr::memmem;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// Every wait on a daemon is bounded by this, so a broken daemon fails one row, not the run.
pub const WAIT_LIMIT: Duration = Duration::from_secs(120);

/// The text that marks a streamed-text notification, as both daemons serialize it.
pub const DELTA_MARKER: &str = "\"method\":\"item/agentMessage/delta\"";
const TURN_COMPLETED_MARKER: &str = "\"method\":\"turn/completed\"";

pub type BenchResult<T> = Result<T, String>;

/// Which binary, and how it is configured.
#[derive(Debug, Clone)]
pub struct DaemonKind {
    pub label: &'static str,
    pub binary: PathBuf,
    /// The environment variable naming the home directory.
    pub home_env: &'static str,
    /// Extra config.toml lines (after the shared provider table).
    pub config_extra: &'static str,
}

impl DaemonKind {
    pub fn openturn(binary: PathBuf) -> DaemonKind {
        DaemonKind {
            label: "openturn",
            binary,
            home_env: "OPENTURN_HOME",
            config_extra: "env_key = \"OPENAI_API_KEY\"\n",
        }
    }

    /// The latency floor (see `floor.rs`): this very executable, spawned as a daemon.
    pub fn floor() -> BenchResult<DaemonKind> {
        Ok(DaemonKind {
            label: "floor",
            binary: std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?,
            home_env: "OPENTURN_HOME",
            config_extra: "",
        })
    }

    pub fn reference(binary: PathBuf) -> DaemonKind {
        DaemonKind {
            label: "reference",
            binary,
            home_env: "CODEX_HOME",
            config_extra: "",
        }
    }

    /// Writes `home/config.toml` pointing at `base_url`, no retries, no approvals.
    pub fn write_config(&self, home: &Path, base_url: &str) -> BenchResult<()> {
        let config = format!(
            "model = \"gpt-5\"\nmodel_provider = \"mock\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"read-only\"\n\n[model_providers.mock]\nname = \"mock\"\n\
             base_url = \"{base_url}\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n\
             stream_max_retries = 0\n{}",
            self.config_extra
        );
        std::fs::write(home.join("config.toml"), config).map_err(|e| format!("config: {e}"))
    }
}

/// One stdout line and when it arrived.
pub struct Line {
    pub at: Instant,
    pub unix_us: i64,
    pub text: String,
}

impl Line {
    pub fn is_delta(&self) -> bool {
        static FINDER: LazyLock<memmem::Finder<'static>> =
            LazyLock::new(|| memmem::Finder::new(DELTA_MARKER));
        FINDER.find(self.text.as_bytes()).is_some()
    }

    pub fn is_turn_completed(&self) -> bool {
        static FINDER: LazyLock<memmem::Finder<'static>> =
            LazyLock::new(|| memmem::Finder::new(TURN_COMPLETED_MARKER));
        FINDER.find(self.text.as_bytes()).is_some()
    }

    pub fn json(&self) -> BenchResult<Value> {
        serde_json::from_str(&self.text).map_err(|e| format!("non-JSON line: {e}"))
    }
}

pub fn unix_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A spawned daemon with a line-reading task on its stdout.
pub struct Daemon {
    pub label: &'static str,
    pub spawned_at: Instant,
    child: Child,
    pid: u32,
    stdin: ChildStdin,
    lines_rx: mpsc::UnboundedReceiver<Line>,
    next_id: i64,
}

impl Daemon {
    /// Spawns `binary app-server` with its home set to `home` (which holds the config).
    pub fn spawn(kind: &DaemonKind, home: &Path) -> BenchResult<Daemon> {
        let mut command = Command::new(&kind.binary);
        command
            .arg("app-server")
            .current_dir(home)
            .env(kind.home_env, home)
            .env("OPENAI_API_KEY", "sk-bench-dummy-key")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let spawned_at = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", kind.binary.display()))?;
        let pid = child.id().ok_or("no pid")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let (lines_tx, lines_rx) = mpsc::unbounded_channel();
        tokio::spawn(read_lines(stdout, lines_tx));
        Ok(Daemon {
            label: kind.label,
            spawned_at,
            child,
            pid,
            stdin,
            lines_rx,
            next_id: 1,
        })
    }

    pub async fn send(&mut self, message: &Value) -> BenchResult<()> {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .await
            .map_err(|e| format!("{} stdin: {e}", self.label))?;
        self.stdin.flush().await.map_err(|e| format!("flush: {e}"))
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> BenchResult<i64> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// The next stdout line, bounded by [`WAIT_LIMIT`].
    pub async fn next_line(&mut self) -> BenchResult<Line> {
        match tokio::time::timeout(WAIT_LIMIT, self.lines_rx.recv()).await {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(format!("{} closed stdout", self.label)),
            Err(_) => Err(format!("{} timed out", self.label)),
        }
    }

    /// Reads until the response to `id`; other lines are dropped. An error response is `Err`.
    pub async fn response_to(&mut self, id: i64) -> BenchResult<(Line, Value)> {
        loop {
            let line = self.next_line().await?;
            if line.is_delta() || !line.text.contains("\"id\"") {
                continue;
            }
            let value = line.json()?;
            if value.get("id") != Some(&json!(id)) || value.get("method").is_some() {
                continue;
            }
            if let Some(error) = value.get("error").filter(|e| e.is_object()) {
                return Err(format!("{}: {}", self.label, error["message"]));
            }
            return Ok((line, value));
        }
    }

    pub async fn request(&mut self, method: &str, params: Value) -> BenchResult<Value> {
        let id = self.send_request(method, params).await?;
        Ok(self.response_to(id).await?.1)
    }

    pub async fn initialize(&mut self) -> BenchResult<Line> {
        let params = json!({"clientInfo": {"name": "openturn-bench", "version": "1.0"}});
        let id = self.send_request("initialize", params).await?;
        let (line, _) = self.response_to(id).await?;
        self.send(&json!({"method": "initialized"})).await?;
        Ok(line)
    }

    pub async fn start_thread(&mut self) -> BenchResult<String> {
        let response = self.request("thread/start", json!({})).await?;
        response["result"]["thread"]["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("{}: thread/start gave no id: {response}", self.label))
    }

    pub async fn start_turn(&mut self, thread_id: &str, text: &str) -> BenchResult<i64> {
        let params = json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]});
        self.send_request("turn/start", params).await
    }

    /// Reads until `turn/completed`, handing every delta line to `on_delta`; fails when the turn
    /// did not complete successfully.
    pub async fn until_turn_completed(
        &mut self,
        mut on_delta: impl FnMut(&Line),
    ) -> BenchResult<Line> {
        loop {
            let line = self.next_line().await?;
            if line.is_delta() {
                on_delta(&line);
                continue;
            }
            if line.text.contains("\"error\"") && line.text.contains("\"id\"") {
                let value = line.json()?;
                if value.get("method").is_none() && value["error"].is_object() {
                    return Err(format!("{}: {}", self.label, value["error"]));
                }
            }
            if line.is_turn_completed() {
                let value = line.json()?;
                let status = &value["params"]["turn"]["status"];
                if status != "completed" {
                    return Err(format!("{}: turn ended {status}: {value}", self.label));
                }
                return Ok(line);
            }
        }
    }

    /// CPU time (user + system) of the daemon process so far, in nanoseconds, threads that
    /// already exited included.
    ///
    /// Read from the process's CPU-time clock (`clock_getcpuclockid` + `clock_gettime`), which
    /// the kernel keeps from the scheduler's run time of every thread of the process: the same
    /// figure `/proc/<pid>/stat` reports as utime + stime, but not rounded to 10 ms ticks. A turn
    /// that costs openturn ~30 ms would otherwise move by a third with one tick.
    pub fn cpu_time(&self) -> BenchResult<Duration> {
        cpu_time_of(self.pid)
    }

    /// Peak resident set size (VmHWM) in KiB.
    pub fn peak_rss_kib(&self) -> BenchResult<u64> {
        proc_status_kib(self.pid, "VmHWM:")
    }

    /// Closes stdin and waits (bounded) for the daemon to exit, killing it if it does not.
    pub async fn stop(mut self) {
        drop(self.stdin);
        let exited = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        if exited.is_err() {
            let _ = self.child.kill().await;
        }
    }
}

/// The CPU time of process `pid` so far (see [`Daemon::cpu_time`]).
pub fn cpu_time_of(pid: u32) -> BenchResult<Duration> {
    let pid = libc::pid_t::try_from(pid).map_err(|e| format!("pid: {e}"))?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid out-pointer for the call's duration.
    let found = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
    if found != 0 {
        return Err(format!("clock_getcpuclockid({pid}): error {found}"));
    }
    clock_time(clock).map_err(|e| format!("cpu clock of {pid}: {e}"))
}

/// The CPU time the calling thread has used.
pub fn thread_cpu_time() -> BenchResult<Duration> {
    clock_time(libc::CLOCK_THREAD_CPUTIME_ID).map_err(|e| format!("thread cpu clock: {e}"))
}

fn clock_time(clock: libc::clockid_t) -> BenchResult<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid out-pointer for the call's duration.
    if unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
        return Err(format!(
            "clock_gettime: {}",
            std::io::Error::last_os_error()
        ));
    }
    let seconds = u64::try_from(now.tv_sec).map_err(|e| e.to_string())?;
    let nanos = u32::try_from(now.tv_nsec).map_err(|e| e.to_string())?;
    Ok(Duration::new(seconds, nanos))
}

/// A `kB` field of `/proc/<pid>/status`.
pub fn proc_status_kib(pid: u32, field: &str) -> BenchResult<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("status: {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))
}

async fn read_lines(stdout: tokio::process::ChildStdout, lines_tx: mpsc::UnboundedSender<Line>) {
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let mut buffer = Vec::with_capacity(4096);
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = Line {
            at: Instant::now(),
            unix_us: unix_micros(),
            // Valid UTF-8 (every line of a sane daemon) takes the fast check; the lossy decoder
            // walks byte by byte and was the driver's largest cost on a 20,000-delta turn.
            text: match String::from_utf8(buffer.trim_ascii_end().to_vec()) {
                Ok(text) => text,
                Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
            },
        };
        if lines_tx.send(line).is_err() {
            return;
        }
    }
}
