//! The measured scenarios. Each starts its own loopback provider and fresh home directory, runs
//! one daemon kind through one workload and returns numbers (or why it could not).
//!
//! Every scenario checks the daemon did the work (delta counts, turn status, item counts), so a
//! daemon that drops output cannot look fast.

use std::time::{Duration, Instant};

use openturn::mock_provider::{
    many_deltas, stamped_deltas, Chunking, MockProvider, Reply, ResponseBuilder, Script, Usage,
};
use serde_json::json;

use super::daemon::{BenchResult, Daemon, DaemonKind, Line};

/// Sizes of the workloads; `quick` shrinks them for a smoke run.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub startup_runs: usize,
    pub throughput_deltas: usize,
    pub throughput_turns: usize,
    pub paced_deltas: usize,
    pub paced_turns: usize,
    pub pace: Duration,
    pub resume_items: usize,
    pub concurrent_threads: usize,
    pub concurrent_deltas: usize,
    /// Connection counts subscribed to one thread over ws (`fanout.rs`), each with the deltas
    /// of its turns: the first two counts share theirs, so their CPU per delta compares, and
    /// enough deltas that a run measures tens of milliseconds of openturn's CPU, not a few.
    pub fanout_subscribers: [(usize, usize); 3],
    /// How many times openturn runs each subscriber count (a fresh daemon each time); the run
    /// with the median CPU per delta is reported. One run's figure moves by ±15% on a shared
    /// 2-core machine, as much as what is measured. The reference runs once: a run of it takes
    /// seconds, and its figures are far from the targets.
    pub fanout_repeats: usize,
    pub fanout_turns: usize,
    /// Connections each running a turn on a thread of its own over ws.
    pub own_threads: usize,
    pub own_thread_deltas: usize,
}

impl Sizes {
    pub fn full() -> Sizes {
        Sizes {
            startup_runs: 5,
            throughput_deltas: 20_000,
            throughput_turns: 3,
            paced_deltas: 500,
            paced_turns: 3,
            pace: Duration::from_millis(5),
            resume_items: 5_000,
            concurrent_threads: 50,
            concurrent_deltas: 200,
            fanout_subscribers: [(1, 10_000), (10, 10_000), (100, 2_000)],
            fanout_repeats: 5,
            fanout_turns: 3,
            own_threads: 100,
            own_thread_deltas: 200,
        }
    }

    /// Just enough to prove the harness works (`cargo test --all-targets` runs this).
    pub fn smoke() -> Sizes {
        Sizes {
            startup_runs: 1,
            throughput_deltas: 200,
            throughput_turns: 1,
            paced_deltas: 20,
            paced_turns: 1,
            pace: Duration::from_millis(5),
            resume_items: 20,
            concurrent_threads: 3,
            concurrent_deltas: 20,
            fanout_subscribers: [(1, 20), (2, 20), (3, 20)],
            fanout_repeats: 1,
            fanout_turns: 1,
            own_threads: 3,
            own_thread_deltas: 20,
        }
    }

    pub fn quick() -> Sizes {
        Sizes {
            startup_runs: 2,
            throughput_deltas: 2_000,
            throughput_turns: 2,
            paced_deltas: 100,
            paced_turns: 1,
            pace: Duration::from_millis(5),
            resume_items: 500,
            concurrent_threads: 10,
            concurrent_deltas: 50,
            fanout_subscribers: [(1, 2_000), (10, 2_000), (100, 500)],
            fanout_repeats: 3,
            fanout_turns: 2,
            own_threads: 100,
            own_thread_deltas: 50,
        }
    }
}

/// A provider that answers every `POST /responses` with `reply`, and a home configured for it.
struct Setup {
    /// Held so the provider serves until the scenario ends.
    _provider: MockProvider,
    home: tempfile::TempDir,
}

async fn setup(kind: &DaemonKind, script: Script) -> BenchResult<Setup> {
    let provider = MockProvider::start(script)
        .await
        .map_err(|e| format!("mock provider: {e}"))?;
    let home = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    kind.write_config(home.path(), &provider.base_url())?;
    Ok(Setup {
        _provider: provider,
        home,
    })
}

/// A provider streaming as fast as it can: the body goes out in 16 KiB chunks, the way bytes
/// reach a reader that is behind a fast sender. One chunk (and one write) per event would measure
/// the mock provider's own syscall rate more than the daemon's throughput.
const BULK_CHUNKS: Chunking = Chunking::FixedBytes(16 * 1024);

fn repeating(reply: impl Into<Reply>) -> Script {
    Script::new([]).with_when_exhausted(reply.into())
}

async fn ready_daemon(kind: &DaemonKind, setup: &Setup) -> BenchResult<(Daemon, String)> {
    let mut daemon = Daemon::spawn(kind, setup.home.path())?;
    daemon.initialize().await?;
    let thread_id = daemon.start_thread().await?;
    Ok((daemon, thread_id))
}

/// Median time from spawn to the `initialize` response.
pub async fn startup(kind: &DaemonKind, sizes: Sizes) -> BenchResult<Duration> {
    let setup = setup(kind, Script::new([])).await?;
    let mut samples = Vec::new();
    for _ in 0..sizes.startup_runs {
        let mut daemon = Daemon::spawn(kind, setup.home.path())?;
        let response: Line = daemon.initialize().await?;
        samples.push(response.at - daemon.spawned_at);
        daemon.stop().await;
    }
    median(&mut samples)
}

pub struct Throughput {
    pub median_wall: Duration,
    pub cpu_per_delta: Duration,
    pub peak_rss_kib: u64,
}

/// Turns of `throughput_deltas` unpaced deltas on one thread.
pub async fn throughput(kind: &DaemonKind, sizes: Sizes) -> BenchResult<Throughput> {
    let n = sizes.throughput_deltas;
    let reply = many_deltas("resp_t", "msg_t", n, "tok ").with_chunking(BULK_CHUNKS);
    let setup = setup(kind, repeating(reply)).await?;
    let (mut daemon, thread_id) = ready_daemon(kind, &setup).await?;
    let mut walls = Vec::new();
    let cpu_before = daemon.cpu_time()?;
    for turn in 0..sizes.throughput_turns {
        let started = Instant::now();
        daemon
            .start_turn(&thread_id, &format!("stream {turn}"))
            .await?;
        let mut deltas = 0usize;
        daemon.until_turn_completed(|_| deltas += 1).await?;
        walls.push(started.elapsed());
        if deltas != n {
            return Err(format!("{}: {deltas} of {n} deltas arrived", kind.label));
        }
    }
    let cpu = daemon.cpu_time()? - cpu_before;
    let peak_rss_kib = daemon.peak_rss_kib()?;
    daemon.stop().await;
    let total_deltas = u32::try_from(n * sizes.throughput_turns).unwrap_or(u32::MAX);
    Ok(Throughput {
        median_wall: median(&mut walls)?,
        cpu_per_delta: cpu / total_deltas.max(1),
        peak_rss_kib,
    })
}

pub struct Latency {
    pub p50: Duration,
    pub p99: Duration,
    pub peak_rss_kib: u64,
}

/// Paced, stamped deltas: arrival time at the driver minus the provider's send time.
pub async fn latency(kind: &DaemonKind, sizes: Sizes) -> BenchResult<Latency> {
    let reply = stamped_deltas("resp_l", "msg_l", sizes.paced_deltas, sizes.pace);
    let setup = setup(kind, repeating(reply)).await?;
    let (mut daemon, thread_id) = ready_daemon(kind, &setup).await?;
    let mut added_us: Vec<i64> = Vec::new();
    let mut unreadable = 0usize;
    for turn in 0..sizes.paced_turns {
        daemon
            .start_turn(&thread_id, &format!("paced {turn}"))
            .await?;
        daemon
            .until_turn_completed(|line| match sent_at_us(&line.text) {
                Some(sent) => added_us.push(line.unix_us - sent),
                None => unreadable += 1,
            })
            .await?;
    }
    let peak_rss_kib = daemon.peak_rss_kib()?;
    daemon.stop().await;
    let expected = sizes.paced_deltas * sizes.paced_turns;
    if added_us.len() != expected || unreadable > 0 {
        return Err(format!(
            "{}: {} stamped deltas read, {unreadable} unreadable, {expected} sent",
            kind.label,
            added_us.len()
        ));
    }
    added_us.sort_unstable();
    let at = |fraction: f64| {
        let index = ((added_us.len() as f64 - 1.0) * fraction).round() as usize;
        Duration::from_micros(u64::try_from(added_us[index].max(0)).unwrap_or(0))
    };
    Ok(Latency {
        p50: at(0.50),
        p99: at(0.99),
        peak_rss_kib,
    })
}

/// The send time the provider wrote as the delta's text (`"delta":"<micros> "`).
fn sent_at_us(line: &str) -> Option<i64> {
    let start = line.find("\"delta\":\"")? + "\"delta\":\"".len();
    let digits: &str = line[start..].split(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

pub struct Resume {
    pub resume: Duration,
    pub read: Duration,
    pub items_read: usize,
}

/// One turn that produces `resume_items` agent messages, a restart, then `thread/resume` and
/// `thread/read` with turns.
pub async fn resume(kind: &DaemonKind, sizes: Sizes) -> BenchResult<Resume> {
    let mut builder = ResponseBuilder::new("resp_r").created();
    for index in 0..sizes.resume_items {
        let text = format!("item {index} of a long thread");
        builder = builder.text_message(&format!("msg_{index}"), &[text.as_str()]);
    }
    let reply = builder.completed(Usage::example(), None).into_reply();
    let setup = setup(kind, repeating(reply)).await?;
    let (mut daemon, thread_id) = ready_daemon(kind, &setup).await?;
    daemon.start_turn(&thread_id, "write a lot").await?;
    daemon.until_turn_completed(|_| {}).await?;
    daemon.stop().await;

    let mut daemon = Daemon::spawn(kind, setup.home.path())?;
    daemon.initialize().await?;
    let started = Instant::now();
    daemon
        .request("thread/resume", json!({"threadId": thread_id}))
        .await?;
    let resumed = Instant::now();
    let read = daemon
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await?;
    let done = Instant::now();
    daemon.stop().await;
    let items_read = read["result"]["thread"]["turns"]
        .as_array()
        .map(|turns| {
            turns
                .iter()
                .map(|turn| turn["items"].as_array().map_or(0, Vec::len))
                .sum()
        })
        .unwrap_or(0);
    if items_read < sizes.resume_items {
        return Err(format!(
            "{}: thread/read returned {items_read} items, expected at least {}",
            kind.label, sizes.resume_items
        ));
    }
    Ok(Resume {
        resume: resumed - started,
        read: done - resumed,
        items_read,
    })
}

pub struct Concurrent {
    pub wall: Duration,
    pub cpu: Duration,
    pub peak_rss_kib: u64,
}

/// `concurrent_threads` threads each start a turn at once; time until the last completes.
pub async fn concurrent(kind: &DaemonKind, sizes: Sizes) -> BenchResult<Concurrent> {
    let n = sizes.concurrent_deltas;
    let setup = setup(kind, repeating(many_deltas("resp_c", "msg_c", n, "tok "))).await?;
    let mut daemon = Daemon::spawn(kind, setup.home.path())?;
    daemon.initialize().await?;
    let mut thread_ids = Vec::new();
    for _ in 0..sizes.concurrent_threads {
        thread_ids.push(daemon.start_thread().await?);
    }
    let cpu_before = daemon.cpu_time()?;
    let started = Instant::now();
    for thread_id in &thread_ids {
        daemon.start_turn(thread_id, "at once").await?;
    }
    let mut deltas = 0usize;
    for _ in 0..sizes.concurrent_threads {
        daemon.until_turn_completed(|_| deltas += 1).await?;
    }
    let wall = started.elapsed();
    let cpu = daemon.cpu_time()? - cpu_before;
    let peak_rss_kib = daemon.peak_rss_kib()?;
    daemon.stop().await;
    let expected = n * sizes.concurrent_threads;
    if deltas != expected {
        return Err(format!(
            "{}: {deltas} of {expected} deltas arrived",
            kind.label
        ));
    }
    Ok(Concurrent {
        wall,
        cpu,
        peak_rss_kib,
    })
}

fn median(samples: &mut [Duration]) -> BenchResult<Duration> {
    samples.sort_unstable();
    samples
        .get(samples.len() / 2)
        .copied()
        .ok_or_else(|| "no samples".to_string())
}
