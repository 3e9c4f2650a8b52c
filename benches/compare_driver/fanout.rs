//! The many-connections scenarios: one daemon listening on `ws://127.0.0.1:PORT`
//! (`app-server --listen`, both daemons), with N WebSocket connections subscribed to one thread
//! (the first starts it, the others `thread/resume` it) while the first runs turns on it, and
//! with 100 connections each running a turn on a thread of its own at once.
//!
//! CPU per delta is the daemon's CPU over the measured turns divided by the deltas the provider
//! sent (not by the deltas delivered): it is what one more subscriber adds to every delta. RSS per
//! connection is the daemon's VmRSS growth from opening, initializing and subscribing (or
//! starting a thread on) the connections, divided by their number.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use memchr::memmem;
use openturn::mock_provider::{many_deltas, Chunking, MockProvider, Script};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::daemon::{cpu_time_of, proc_status_kib, BenchResult, DaemonKind, WAIT_LIMIT};
use super::fanout_floor;
use super::scenarios::Sizes;
use super::{both, mib, micros, millis, row, Args, Row, Unit};

/// Streamed as fast as the provider can (see `scenarios::BULK_CHUNKS`).
const BULK_CHUNKS: Chunking = Chunking::FixedBytes(16 * 1024);

/// A daemon serving WebSocket connections on a loopback port; killed when dropped.
struct WsDaemon {
    label: &'static str,
    url: String,
    pid: u32,
    _child: Child,
}

impl WsDaemon {
    async fn spawn(kind: &DaemonKind, home: &Path) -> BenchResult<WsDaemon> {
        // A port free a moment ago: both daemons take `ws://IP:PORT`, not all announce the
        // port they picked for `:0`.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(|e| format!("free port: {e}"))?
            .port();
        let url = format!("ws://127.0.0.1:{port}");
        let child = Command::new(&kind.binary)
            .args(["app-server", "--listen", &url])
            .current_dir(home)
            .env(kind.home_env, home)
            .env("OPENAI_API_KEY", "sk-bench-dummy-key")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", kind.binary.display()))?;
        let pid = child.id().ok_or("no pid")?;
        let daemon = WsDaemon {
            label: kind.label,
            url,
            pid,
            _child: child,
        };
        // Ready once an upgrade succeeds; the daemon binds a moment after it starts.
        let deadline = Instant::now() + WAIT_LIMIT;
        loop {
            match tokio_tungstenite::connect_async(daemon.url.as_str()).await {
                Ok(_) => return Ok(daemon),
                Err(error) if Instant::now() >= deadline => {
                    return Err(format!("{}: never listened: {error}", kind.label))
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    fn cpu_time(&self) -> BenchResult<Duration> {
        cpu_time_of(self.pid)
    }

    fn rss_kib(&self) -> BenchResult<u64> {
        proc_status_kib(self.pid, "VmRSS:")
    }

    fn peak_rss_kib(&self) -> BenchResult<u64> {
        proc_status_kib(self.pid, "VmHWM:")
    }

    async fn connect(&self) -> BenchResult<Conn> {
        let (ws, _) = tokio::time::timeout(
            WAIT_LIMIT,
            tokio_tungstenite::connect_async(self.url.as_str()),
        )
        .await
        .map_err(|_| format!("{}: connect timed out", self.label))?
        .map_err(|e| format!("{}: connect: {e}", self.label))?;
        let mut conn = Conn {
            label: self.label,
            ws,
            next_id: 1,
            received_bytes: 0,
        };
        conn.initialize().await?;
        Ok(conn)
    }
}

/// One WebSocket connection, one JSON-RPC message per text frame. Deltas are recognised by a
/// substring search, not parsed, so the driver's CPU stays small next to the daemon's.
struct Conn {
    label: &'static str,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: i64,
    /// What the text and binary frames read so far took on the wire, headers included.
    received_bytes: u64,
}

impl Conn {
    async fn send(&mut self, message: Value) -> BenchResult<()> {
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .map_err(|e| format!("{}: send: {e}", self.label))
    }

    async fn send_request(&mut self, method: &str, params: Value) -> BenchResult<i64> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// The next text (or binary) frame, bounded by [`WAIT_LIMIT`].
    async fn next_text(&mut self) -> BenchResult<String> {
        loop {
            let frame = tokio::time::timeout(WAIT_LIMIT, self.ws.next())
                .await
                .map_err(|_| format!("{}: timed out", self.label))?;
            match frame {
                Some(Ok(Message::Text(text))) => {
                    self.received_bytes += wire_bytes(text.len());
                    return Ok(text.as_str().to_owned());
                }
                Some(Ok(Message::Binary(bytes))) => {
                    self.received_bytes += wire_bytes(bytes.len());
                    return Ok(String::from_utf8_lossy(&bytes).into_owned());
                }
                Some(Ok(Message::Close(reason))) => {
                    return Err(format!("{}: closed: {reason:?}", self.label))
                }
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(format!("{}: {error}", self.label)),
                None => return Err(format!("{}: connection ended", self.label)),
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> BenchResult<Value> {
        let id = self.send_request(method, params).await?;
        loop {
            let text = self.next_text().await?;
            if !text.contains("\"id\"") {
                continue;
            }
            let value: Value =
                serde_json::from_str(&text).map_err(|e| format!("non-JSON frame: {e}"))?;
            if value.get("id") != Some(&json!(id)) || value.get("method").is_some() {
                continue;
            }
            if value["error"].is_object() {
                return Err(format!("{}: {method}: {}", self.label, value["error"]));
            }
            return Ok(value);
        }
    }

    async fn initialize(&mut self) -> BenchResult<()> {
        let params = json!({"clientInfo": {"name": "openturn-bench", "version": "1.0"}});
        self.request("initialize", params).await?;
        self.send(json!({"method": "initialized"})).await
    }

    async fn start_thread(&mut self) -> BenchResult<String> {
        let response = self.request("thread/start", json!({})).await?;
        response["result"]["thread"]["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("{}: thread/start gave no id", self.label))
    }

    async fn start_turn(&mut self, thread_id: &str) -> BenchResult<i64> {
        let params = json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]});
        self.send_request("turn/start", params).await
    }

    /// Reads until `turn/completed`; the number of deltas seen. A failed turn or an error
    /// response is `Err`.
    async fn until_turn_completed(&mut self) -> BenchResult<usize> {
        let delta = memmem::Finder::new("\"method\":\"item/agentMessage/delta\"");
        let completed = memmem::Finder::new("\"method\":\"turn/completed\"");
        let mut deltas = 0;
        loop {
            let text = self.next_text().await?;
            if delta.find(text.as_bytes()).is_some() {
                deltas += 1;
                continue;
            }
            if completed.find(text.as_bytes()).is_some() {
                let value: Value =
                    serde_json::from_str(&text).map_err(|e| format!("non-JSON frame: {e}"))?;
                let status = &value["params"]["turn"]["status"];
                if status != "completed" {
                    return Err(format!("{}: turn ended {status}", self.label));
                }
                return Ok(deltas);
            }
            if text.contains("\"error\"") && text.contains("\"id\"") {
                let value: Value =
                    serde_json::from_str(&text).map_err(|e| format!("non-JSON frame: {e}"))?;
                if value.get("method").is_none() && value["error"].is_object() {
                    return Err(format!("{}: {}", self.label, value["error"]));
                }
            }
        }
    }
}

/// A server frame's size on the wire: its payload and an unmasked header (RFC 6455 §5.2).
fn wire_bytes(payload: usize) -> u64 {
    let header = match payload {
        0..=125 => 2,
        126..=65535 => 4,
        _ => 10,
    };
    (payload + header) as u64
}

/// Every connection reads its turn to the end at once (a connection left unread would fill
/// its queue and be closed as too slow); each must see `expected` deltas.
async fn read_all(conns: Vec<Conn>, expected: usize) -> BenchResult<Vec<Conn>> {
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            tokio::spawn(async move {
                let deltas = conn.until_turn_completed().await?;
                if deltas != expected {
                    return Err(format!(
                        "{}: {deltas} of {expected} deltas arrived",
                        conn.label
                    ));
                }
                Ok(conn)
            })
        })
        .collect();
    let mut conns = Vec::with_capacity(tasks.len());
    for task in tasks {
        conns.push(task.await.map_err(|e| format!("reader task: {e}"))??);
    }
    Ok(conns)
}

/// What one many-connections run measured.
pub struct Fanout {
    /// Median wall time of one turn, from `turn/start` to the last connection's `turn/completed`.
    pub wall: Duration,
    pub cpu_per_delta: Duration,
    /// VmRSS growth per connection: for subscribers, per connection beyond the first (opened,
    /// initialized, `thread/resume`d after the first's warm-up turn), none with one; for own
    /// threads, per connection from none (opened, initialized, its thread started).
    pub rss_per_subscriber_kib: Option<f64>,
    pub peak_rss_kib: u64,
    /// What one connection read per delta over the measured turns, frame headers included.
    pub bytes_per_delta: f64,
}

/// `subscribers` connections on one thread; the first runs `fanout_turns` turns of `n`
/// deltas, every connection reads them all.
pub async fn subscribed(
    kind: &DaemonKind,
    sizes: Sizes,
    subscribers: usize,
    n: usize,
) -> BenchResult<Fanout> {
    let reply = many_deltas("resp_f", "msg_f", n, "tok ").with_chunking(BULK_CHUNKS);
    let provider = MockProvider::start(Script::new([]).with_when_exhausted(reply.into()))
        .await
        .map_err(|e| format!("mock provider: {e}"))?;
    let home = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    kind.write_config(home.path(), &provider.base_url())?;
    let daemon = WsDaemon::spawn(kind, home.path()).await?;
    let mut first = daemon.connect().await?;
    let thread_id = first.start_thread().await?;
    // A first turn gives the thread a history to resume (a thread with none is not resumable
    // everywhere) and warms the daemon up.
    first.start_turn(&thread_id).await?;
    let mut conns = read_all(vec![first], n).await?;
    let rss_before = daemon.rss_kib()?;
    for _ in 1..subscribers {
        let mut conn = daemon.connect().await?;
        conn.request("thread/resume", json!({"threadId": thread_id}))
            .await?;
        conns.push(conn);
    }
    let rss_connected = daemon.rss_kib()?;
    let cpu_before = daemon.cpu_time()?;
    let received_before = conns[0].received_bytes;
    let mut walls = Vec::new();
    for _ in 0..sizes.fanout_turns {
        let started = Instant::now();
        conns[0].start_turn(&thread_id).await?;
        conns = read_all(conns, n).await?;
        walls.push(started.elapsed());
    }
    let cpu = daemon.cpu_time()? - cpu_before;
    let peak_rss_kib = daemon.peak_rss_kib()?;
    walls.sort_unstable();
    let sent = u32::try_from(n * sizes.fanout_turns).unwrap_or(u32::MAX);
    let received = conns[0].received_bytes - received_before;
    Ok(Fanout {
        wall: walls[walls.len() / 2],
        cpu_per_delta: cpu / sent.max(1),
        rss_per_subscriber_kib: (subscribers > 1)
            .then(|| rss_connected.saturating_sub(rss_before) as f64 / (subscribers - 1) as f64),
        peak_rss_kib,
        bytes_per_delta: received as f64 / f64::from(sent.max(1)),
    })
}

/// [`subscribed`], run `fanout_repeats` times for openturn: the run with the median CPU per
/// delta.
async fn subscribed_median(
    kind: &DaemonKind,
    sizes: Sizes,
    subscribers: usize,
    n: usize,
) -> BenchResult<Fanout> {
    let repeats = if kind.label == "openturn" {
        sizes.fanout_repeats.max(1)
    } else {
        1
    };
    let mut runs = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        runs.push(subscribed(kind, sizes, subscribers, n).await?);
    }
    runs.sort_by_key(|run| run.cpu_per_delta);
    Ok(runs.swap_remove(runs.len() / 2))
}

/// `own_threads` connections, each starting a thread and then, all at once, a turn of
/// `own_thread_deltas` deltas on it.
pub async fn own_threads(kind: &DaemonKind, sizes: Sizes) -> BenchResult<Fanout> {
    let n = sizes.own_thread_deltas;
    let count = sizes.own_threads;
    let reply = many_deltas("resp_o", "msg_o", n, "tok ");
    let provider = MockProvider::start(Script::new([]).with_when_exhausted(reply.into()))
        .await
        .map_err(|e| format!("mock provider: {e}"))?;
    let home = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    kind.write_config(home.path(), &provider.base_url())?;
    let daemon = WsDaemon::spawn(kind, home.path()).await?;
    let rss_before = daemon.rss_kib()?;
    let mut conns = Vec::new();
    let mut threads = Vec::new();
    for _ in 0..count {
        let mut conn = daemon.connect().await?;
        threads.push(conn.start_thread().await?);
        conns.push(conn);
    }
    let rss_connected = daemon.rss_kib()?;
    let cpu_before = daemon.cpu_time()?;
    let received = |conns: &[Conn]| conns.iter().map(|c| c.received_bytes).sum::<u64>();
    let received_before = received(&conns);
    let started = Instant::now();
    for (conn, thread_id) in conns.iter_mut().zip(&threads) {
        conn.start_turn(thread_id).await?;
    }
    let conns = read_all(conns, n).await?;
    let wall = started.elapsed();
    let cpu = daemon.cpu_time()? - cpu_before;
    let sent = u32::try_from(n * count).unwrap_or(u32::MAX);
    let received = received(&conns) - received_before;
    Ok(Fanout {
        wall,
        cpu_per_delta: cpu / sent.max(1),
        rss_per_subscriber_kib: Some(
            rss_connected.saturating_sub(rss_before) as f64 / count.max(1) as f64,
        ),
        peak_rss_kib: daemon.peak_rss_kib()?,
        bytes_per_delta: received as f64 / f64::from(sent.max(1)),
    })
}

/// The many-connections rows, and the line under the table that compares the CPU per delta of
/// the second subscriber count (10) with the first (1).
pub async fn rows(args: &Args) -> (Vec<Row>, Option<String>) {
    let sizes = args.sizes;
    let mut rows = Vec::new();
    let mut per_delta = Vec::new();
    for (subscribers, deltas) in sizes.fanout_subscribers {
        let results = both(args, "fanout", move |kind, sizes| async move {
            subscribed_median(&kind, sizes, subscribers, deltas).await
        })
        .await;
        let what = format!(
            "ws, {subscribers} connection(s) subscribed to one thread, turns of {deltas} deltas \
             (openturn: median of {} runs)",
            sizes.fanout_repeats
        );
        let wall = format!(
            "{what}: wall time of a turn (median of {})",
            sizes.fanout_turns
        );
        rows.push(row(wall, Unit::Millis, &results, |f| millis(f.wall), None));
        let cpu = format!("{what}: daemon CPU per delta");
        rows.push(row(
            cpu,
            Unit::Micros,
            &results,
            |f| micros(f.cpu_per_delta),
            None,
        ));
        if subscribers > 1 {
            let rss = format!("{what}: RSS per added subscriber");
            rows.push(rss_row(rss, &results));
        }
        let cpu_of = |result: &BenchResult<Fanout>| result.as_ref().ok().map(|f| f.cpu_per_delta);
        per_delta.push(PerDelta {
            subscribers,
            deltas,
            ours: cpu_of(&results.0),
            theirs: cpu_of(&results.1),
            bytes: results.0.as_ref().ok().map(|f| f.bytes_per_delta),
        });
    }
    let floor = floor(&per_delta).await;
    let results = both(args, "fanout", |kind, sizes| async move {
        own_threads(&kind, sizes).await
    })
    .await;
    let what = format!(
        "ws, {} connections each running a turn of {} deltas on its own thread at once",
        sizes.own_threads, sizes.own_thread_deltas
    );
    rows.push(row(
        format!("{what}: wall time"),
        Unit::Millis,
        &results,
        |f| millis(f.wall),
        None,
    ));
    let cpu = format!("{what}: daemon CPU per delta");
    rows.push(row(
        cpu,
        Unit::Micros,
        &results,
        |f| micros(f.cpu_per_delta),
        None,
    ));
    let rss = format!("{what}: RSS per connection (with its thread)");
    rows.push(rss_row(rss, &results));
    let peak = format!("{what}: peak RSS (VmHWM)");
    rows.push(row(
        peak,
        Unit::MiB,
        &results,
        |f| mib(f.peak_rss_kib),
        None,
    ));
    (rows, fanout_line(&per_delta, floor))
}

/// One subscriber count's CPU per delta, for the line under the table.
struct PerDelta {
    subscribers: usize,
    deltas: usize,
    ours: Option<Duration>,
    theirs: Option<Duration>,
    /// What one openturn subscriber read per delta.
    bytes: Option<f64>,
}

/// The kernel's part of an added subscriber (see `fanout_floor.rs`), for the bytes openturn
/// sent per delta with one subscriber and the second subscriber count; `None` without them.
async fn floor(per_delta: &[PerDelta]) -> Option<BenchResult<Duration>> {
    let [one, many, ..] = per_delta else {
        return None;
    };
    let (bytes, deltas, sockets) = (one.bytes?, one.deltas, many.subscribers);
    eprintln!("compare_driver: fanout: floor");
    let measured =
        tokio::task::spawn_blocking(move || fanout_floor::per_added_socket(bytes, deltas, sockets))
            .await;
    Some(
        measured
            .map_err(|e| format!("fan-out floor: {e}"))
            .and_then(|r| r),
    )
}

/// A row of RSS per connection (a run with a single subscriber has none, and no such row).
fn rss_row(metric: String, results: &(BenchResult<Fanout>, BenchResult<Fanout>)) -> Row {
    let pick = |result: &BenchResult<Fanout>| match result {
        Ok(fanout) => fanout
            .rss_per_subscriber_kib
            .ok_or_else(|| "no connection added".to_string()),
        Err(reason) => Err(reason.clone()),
    };
    Row {
        metric,
        unit: Unit::KiB,
        openturn: pick(&results.0),
        reference: pick(&results.1),
        target: None,
    }
}

/// "10 subscribers cost X× one subscriber's CPU per delta" for each daemon measured, and what
/// the kernel alone makes of it on this machine (`floor`).
fn fanout_line(per_delta: &[PerDelta], floor: Option<BenchResult<Duration>>) -> Option<String> {
    let [one, many, ..] = per_delta else {
        return None;
    };
    let factor = |base: &Option<Duration>, more: &Option<Duration>| {
        Some(more.as_ref()?.as_secs_f64() / base.as_ref()?.as_secs_f64().max(f64::MIN_POSITIVE))
    };
    let ours = factor(&one.ours, &many.ours)?;
    let verdict = if ours < FANOUT_TARGET {
        "met"
    } else {
        "**missed**"
    };
    let theirs = factor(&one.theirs, &many.theirs)
        .map(|t| format!("; the reference: {t:.2}×"))
        .unwrap_or_default();
    let (n, m) = (one.subscribers, many.subscribers);
    let floor = match (floor, one.ours, one.bytes) {
        (Some(Ok(added)), Some(base), Some(bytes)) => {
            let added_all = added.as_secs_f64() * (m - n) as f64;
            let lowest = 1.0 + added_all / base.as_secs_f64().max(f64::MIN_POSITIVE);
            format!(
                "\nThe kernel's part on this machine: writing the same {bytes:.0} bytes per delta \
                 to each added loopback socket, from one thread to readers that only drain them, \
                 costs the writer {:.3} µs per delta; with openturn's {:.2} µs per delta for \
                 {n} subscriber, those writes alone make {m} subscribers cost about {lowest:.2}× \
                 one.\n",
                added.as_secs_f64() * 1e6,
                base.as_secs_f64() * 1e6,
            )
        }
        (Some(Err(reason)), ..) => format!("\nThe kernel's part: not measured ({reason}).\n"),
        _ => String::new(),
    };
    Some(format!(
        "\nFan-out: {m} subscribers cost openturn {ours:.2}× the CPU per delta of {n} \
         (target < {FANOUT_TARGET}×: {verdict}){theirs}.\n{floor}"
    ))
}

/// The most a delta may cost with 10 subscribers, as a multiple of its cost with one.
const FANOUT_TARGET: f64 = 1.2;
