//! The comparison driver behind `benches/compare`: runs openturn and the reference daemon against
//! the same loopback provider, scenario by scenario (one daemon after the other, so machine noise
//! hits both alike), and prints a Markdown table of both figures, their ratio and the target.
//!
//! Usage: `compare_driver --openturn PATH [--reference PATH] [--quick] [--only SCENARIO]`. Without `--reference`
//! only openturn's column is filled (useful while profiling). Run by `cargo test` (no `--bench`
//! argument, no `--openturn`), it does a smoke run of the debug binary at tiny sizes and fails if
//! any openturn scenario fails, so the harness cannot rot unnoticed. Under `cargo test` it reads
//! libtest's arguments (`--list`, a name filter) as one test named `compare_driver`.

mod daemon;
mod fanout;
mod fanout_floor;
mod floor;
#[path = "../support/libtest_args.rs"]
mod libtest_args;
mod scenarios;

use std::path::PathBuf;
use std::time::Duration;

use daemon::{BenchResult, DaemonKind};
use scenarios::Sizes;

/// The reason recorded for the reference when no `--reference` was given.
const NOT_RUN: &str = "not run";
/// The reason recorded for scenarios left out by `--only`.
const SKIPPED: &str = "skipped";

/// One row: a figure per daemon, and how the ratio is judged.
struct Row {
    metric: String,
    unit: Unit,
    openturn: BenchResult<f64>,
    reference: BenchResult<f64>,
    target: Option<Target>,
}

#[derive(Clone, Copy)]
enum Unit {
    Millis,
    Micros,
    MiB,
    KiB,
    Count,
}

/// A target on a ratio of the two figures.
#[derive(Clone, Copy)]
enum Target {
    /// reference / openturn must be at least this (openturn faster).
    SpeedupAtLeast(f64),
    /// openturn / reference must be at most this (openturn smaller).
    FractionAtMost(f64),
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000_000.0
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

struct Args {
    openturn: PathBuf,
    reference: Option<PathBuf>,
    sizes: Sizes,
    smoke: bool,
    /// Run only this scenario (startup, throughput, latency, resume, concurrent, fanout).
    only: Option<String>,
}

/// The driver's own flags; without any of them the arguments are libtest's (`cargo test`).
const DRIVER_FLAGS: &[&str] = &["--openturn", "--reference", "--quick", "--only", "--bench"];

/// The run the arguments ask for; `None` when there is nothing to run (`cargo test -- --list`
/// was answered, or a `cargo test` filter left the smoke run out).
fn parse_args() -> Result<Option<Args>, String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if !raw.iter().any(|arg| DRIVER_FLAGS.contains(&arg.as_str())) {
        return Ok(match libtest_args::mode("compare_driver", &raw) {
            libtest_args::Mode::Run => Some(Args {
                openturn: PathBuf::from(env!("CARGO_BIN_EXE_openturn")),
                reference: None,
                sizes: Sizes::smoke(),
                smoke: true,
                only: None,
            }),
            libtest_args::Mode::List => {
                libtest_args::print_listing("compare_driver");
                None
            }
            libtest_args::Mode::Skip => None,
        });
    }
    parse_driver_args(raw).map(Some)
}

fn parse_driver_args(raw: Vec<String>) -> Result<Args, String> {
    let mut openturn = None;
    let mut reference = None;
    let mut sizes = Sizes::full();
    let mut under_cargo_bench = false;
    let mut only = None;
    let mut args = raw.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--openturn" => openturn = args.next().map(PathBuf::from),
            "--reference" => reference = args.next().map(PathBuf::from),
            "--quick" => sizes = Sizes::quick(),
            "--only" => only = args.next(),
            "--bench" => under_cargo_bench = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    // Daemons run with their home as working directory, so relative paths would break.
    let absolute = |path: PathBuf| std::fs::canonicalize(&path).unwrap_or(path);
    let openturn = openturn.map(absolute);
    let reference = reference.map(absolute);
    match openturn {
        Some(openturn) => Ok(Args {
            openturn,
            reference,
            sizes,
            smoke: false,
            only,
        }),
        None if !under_cargo_bench => Ok(Args {
            openturn: PathBuf::from(env!("CARGO_BIN_EXE_openturn")),
            reference: None,
            sizes: Sizes::smoke(),
            smoke: true,
            only,
        }),
        None => Err("--openturn PATH is required".to_string()),
    }
}

fn main() -> std::process::ExitCode {
    // Spawned by the latency scenario as the floor daemon (see floor.rs).
    if std::env::args().nth(1).as_deref() == Some("app-server") {
        return match floor::run() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("floor daemon: {error}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => return std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("compare_driver: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    // One driver thread leaves the other core to the daemon under test.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("compare_driver: runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let (rows, floor, fanout) = runtime.block_on(run(&args));
    print!("{}", render(&rows));
    if let Some(floor) = &floor {
        print!("{}", render_floor(floor));
    }
    if let Some(fanout) = &fanout {
        print!("{fanout}");
    }
    if args.smoke && (!smoke_passed(&rows) || floor.as_ref().is_some_and(Result::is_err)) {
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

/// In a smoke run every openturn figure must exist, except for methods not implemented yet.
fn smoke_passed(rows: &[Row]) -> bool {
    let mut passed = true;
    for row in rows {
        if let Err(reason) = &row.openturn {
            if !reason.contains("Method not found") && reason != SKIPPED {
                eprintln!("compare_driver smoke: {}: {reason}", row.metric);
                passed = false;
            }
        }
    }
    passed
}

/// Runs `scenario` for openturn, then for the reference (or notes its absence).
async fn both<T, F, Fut>(args: &Args, name: &str, scenario: F) -> (BenchResult<T>, BenchResult<T>)
where
    F: Fn(DaemonKind, Sizes) -> Fut,
    Fut: std::future::Future<Output = BenchResult<T>>,
{
    if args.only.as_deref().is_some_and(|only| only != name) {
        return (Err(SKIPPED.to_string()), Err(SKIPPED.to_string()));
    }
    eprintln!("compare_driver: {name}: openturn");
    let openturn = scenario(DaemonKind::openturn(args.openturn.clone()), args.sizes).await;
    let reference = match &args.reference {
        Some(path) => {
            eprintln!("compare_driver: {name}: reference");
            scenario(DaemonKind::reference(path.clone()), args.sizes).await
        }
        None => Err(NOT_RUN.to_string()),
    };
    for (label, result) in [("openturn", &openturn), ("reference", &reference)] {
        if let Err(error) = result {
            eprintln!("compare_driver: {name}: {label}: {error}");
        }
    }
    (openturn, reference)
}

fn row<T>(
    metric: impl Into<String>,
    unit: Unit,
    results: &(BenchResult<T>, BenchResult<T>),
    figure: impl Fn(&T) -> f64,
    target: Option<Target>,
) -> Row {
    let pick = |result: &BenchResult<T>| result.as_ref().map(&figure).map_err(Clone::clone);
    Row {
        metric: metric.into(),
        unit,
        openturn: pick(&results.0),
        reference: pick(&results.1),
        target,
    }
}

/// The latency floor's measurement (see floor.rs).
type Floor = BenchResult<scenarios::Latency>;

/// The rows, the latency floor when the latency scenario ran, and the fan-out line when the
/// fan-out scenario did.
async fn run(args: &Args) -> (Vec<Row>, Option<Floor>, Option<String>) {
    let sizes = args.sizes;
    let mut rows = Vec::new();
    let startup = both(args, "startup", |k, s| async move {
        scenarios::startup(&k, s).await
    })
    .await;
    rows.push(row(
        format!(
            "Startup: spawn → `initialize` response (median of {})",
            sizes.startup_runs
        ),
        Unit::Millis,
        &startup,
        |d| millis(*d),
        Some(Target::FractionAtMost(0.2)),
    ));
    let throughput = both(args, "throughput", |k, s| async move {
        scenarios::throughput(&k, s).await
    })
    .await;
    let n = sizes.throughput_deltas;
    rows.push(row(
        format!(
            "Turn of {n} text deltas: wall time (median of {}; ratio = throughput)",
            sizes.throughput_turns
        ),
        Unit::Millis,
        &throughput,
        |t| millis(t.median_wall),
        Some(Target::SpeedupAtLeast(20.0)),
    ));
    rows.push(row(
        format!("Turn of {n} text deltas: daemon CPU per delta"),
        Unit::Micros,
        &throughput,
        |t| micros(t.cpu_per_delta),
        Some(Target::FractionAtMost(0.02)),
    ));
    let latency = both(args, "latency", |k, s| async move {
        scenarios::latency(&k, s).await
    })
    .await;
    let floor = match args.only.as_deref() {
        Some(only) if only != "latency" => None,
        _ => {
            eprintln!("compare_driver: latency: floor");
            Some(match daemon::DaemonKind::floor() {
                Ok(kind) => scenarios::latency(&kind, sizes).await,
                Err(error) => Err(error),
            })
        }
    };
    let paced = format!(
        "{} deltas at {}/s, {} turns",
        sizes.paced_deltas,
        1000 / sizes.pace.as_millis().max(1),
        sizes.paced_turns
    );
    rows.push(row(
        format!("Added latency per delta, p50 ({paced})"),
        Unit::Millis,
        &latency,
        |l| millis(l.p50),
        None,
    ));
    rows.push(row(
        format!("Added latency per delta, p99 ({paced})"),
        Unit::Millis,
        &latency,
        |l| millis(l.p99),
        Some(Target::FractionAtMost(0.2)),
    ));
    rows.push(row(
        format!(
            "Peak RSS (VmHWM) after the {} paced turns",
            sizes.paced_turns
        ),
        Unit::MiB,
        &latency,
        |l| mib(l.peak_rss_kib),
        Some(Target::FractionAtMost(0.125)),
    ));
    rows.push(row(
        format!(
            "Peak RSS (VmHWM) after the {} turns of {n} deltas",
            sizes.throughput_turns
        ),
        Unit::MiB,
        &throughput,
        |t| mib(t.peak_rss_kib),
        None,
    ));
    let resume = both(args, "resume", |k, s| async move {
        scenarios::resume(&k, s).await
    })
    .await;
    let items = sizes.resume_items;
    rows.push(row(
        format!("`thread/resume` of a {items}-item thread (after restart)"),
        Unit::Millis,
        &resume,
        |r| millis(r.resume),
        None,
    ));
    rows.push(row(
        "`thread/read` with turns of that thread",
        Unit::Millis,
        &resume,
        |r| millis(r.read),
        None,
    ));
    rows.push(row(
        "Items returned by that `thread/read`",
        Unit::Count,
        &resume,
        |r| r.items_read as f64,
        None,
    ));
    let concurrent = both(args, "concurrent", |k, s| async move {
        scenarios::concurrent(&k, s).await
    })
    .await;
    let at_once = format!(
        "{} threads running turns of {} deltas at once",
        sizes.concurrent_threads, sizes.concurrent_deltas
    );
    rows.push(row(
        format!("{at_once}: wall time"),
        Unit::Millis,
        &concurrent,
        |c| millis(c.wall),
        None,
    ));
    rows.push(row(
        format!("{at_once}: daemon CPU"),
        Unit::Millis,
        &concurrent,
        |c| millis(c.cpu),
        None,
    ));
    rows.push(row(
        format!("{at_once}: peak RSS (VmHWM)"),
        Unit::MiB,
        &concurrent,
        |c| mib(c.peak_rss_kib),
        Some(Target::FractionAtMost(0.1)),
    ));
    let (fanout_rows, fanout_line) = fanout::rows(args).await;
    rows.extend(fanout_rows);
    (rows, floor, fanout_line)
}

/// The line under the table that says how much added latency this machine imposes on any daemon.
fn render_floor(floor: &BenchResult<scenarios::Latency>) -> String {
    match floor {
        Ok(floor) => format!(
            "\nLatency floor of this machine (the same scenario through a forwarder that does \
             nothing else, `benches/compare_driver/floor.rs`): p50 {:.1} ms, p99 {:.1} ms.\n",
            millis(floor.p50),
            millis(floor.p99)
        ),
        Err(reason) => format!("\nLatency floor: not measured ({reason}).\n"),
    }
}

fn format_figure(value: &BenchResult<f64>, unit: Unit) -> String {
    match value {
        Ok(v) => match unit {
            Unit::Millis => format!("{v:.1} ms"),
            Unit::Micros => format!("{v:.2} µs"),
            Unit::MiB => format!("{v:.1} MiB"),
            Unit::KiB => format!("{v:.0} KiB"),
            Unit::Count => format!("{v:.0}"),
        },
        Err(_) => "n/a".to_string(),
    }
}

/// (ratio text, target text, verdict text)
fn judge(row: &Row) -> (String, String, String) {
    let (Ok(ours), Ok(theirs)) = (&row.openturn, &row.reference) else {
        let target = row.target.map(target_text).unwrap_or_default();
        return ("n/a".into(), target, "n/a".into());
    };
    let (ratio, met) = match row.target {
        Some(Target::SpeedupAtLeast(goal)) => {
            let ratio = theirs / ours.max(f64::MIN_POSITIVE);
            (format!("{ratio:.1}× faster"), Some(ratio >= goal))
        }
        Some(Target::FractionAtMost(goal)) => {
            let ratio = ours / theirs.max(f64::MIN_POSITIVE);
            (format!("{ratio:.3}"), Some(ratio <= goal))
        }
        None => (format!("{:.3}", ours / theirs.max(f64::MIN_POSITIVE)), None),
    };
    let verdict = match met {
        Some(true) => "met",
        Some(false) => "**missed**",
        None => "",
    };
    (
        ratio,
        row.target.map(target_text).unwrap_or_default(),
        verdict.into(),
    )
}

fn target_text(target: Target) -> String {
    match target {
        Target::SpeedupAtLeast(goal) => format!("≥ {goal:.0}× faster"),
        Target::FractionAtMost(goal) => format!("≤ {goal}"),
    }
}

fn render(rows: &[Row]) -> String {
    let mut out = String::from(
        "| Metric | openturn | reference | ratio (openturn / reference) | target | |\n\
         |---|---:|---:|---:|---|---|\n",
    );
    let mut notes = Vec::new();
    for row in rows {
        let (ratio, target, verdict) = judge(row);
        out.push_str(&format!(
            "| {} | {} | {} | {ratio} | {target} | {verdict} |\n",
            row.metric,
            format_figure(&row.openturn, row.unit),
            format_figure(&row.reference, row.unit),
        ));
        for (label, value) in [("openturn", &row.openturn), ("reference", &row.reference)] {
            if let Err(reason) = value {
                if reason == NOT_RUN || reason == SKIPPED {
                    continue;
                }
                let note = format!("- {label}, {}: {reason}", row.metric);
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    if !notes.is_empty() {
        out.push_str("\nNot measured:\n\n");
        for note in notes {
            out.push_str(&note);
            out.push('\n');
        }
    }
    out
}
