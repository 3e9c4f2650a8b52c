//! The `openturn` binary: command-line parsing, logging setup, and nothing else.

use anyhow::Context;
use clap::{Parser, Subcommand};

use openturn::config::{default_home, feature_overrides, Config};

#[derive(Parser)]
#[command(
    name = "openturn",
    version,
    about = "A Responses-API agent daemon for editors, SDKs and scripts"
)]
struct Cli {
    /// Override a config.toml key: `-c model="gpt-5"`, `-c model_providers.local.base_url=...`.
    /// The value is parsed as TOML, falling back to a plain string.
    #[arg(short = 'c', long = "config", global = true, value_name = "KEY=VALUE")]
    config: Vec<String>,
    /// Enable a feature (repeatable): the same as `-c features.<name>=true`.
    #[arg(long = "enable", global = true, value_name = "FEATURE")]
    enable: Vec<String>,
    /// Disable a feature (repeatable): the same as `-c features.<name>=false`.
    #[arg(long = "disable", global = true, value_name = "FEATURE")]
    disable: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the app-server JSON-RPC protocol on stdin/stdout.
    AppServer {
        /// Transport; only `stdio://` is supported.
        #[arg(long, default_value = "stdio://")]
        listen: String,
        /// Same as `--listen stdio://`.
        #[arg(long)]
        stdio: bool,
    },
    /// Run a short scripted session offline: a built-in loopback provider replays shipped
    /// transcripts, and the live notification stream is printed.
    Demo,
    /// Run one turn headless: JSON events (`--json`) or text for a person. Wire-compatible with
    /// `codex exec --json`, so the official TypeScript SDK drives it.
    Exec(Box<openturn::exec::ExecArgs>),
    /// Write the protocol's JSON Schema (generated from the protocol types) into a folder.
    Schema {
        /// Output folder; the checked-in copy lives in `schema/`.
        #[arg(long, default_value = "schema")]
        out: std::path::PathBuf,
    },
}

/// Every `--enable X` / `--enable=X` and `--disable X` / `--disable=X`, wherever it stands;
/// the values of `-c`/`--config` are skipped, so `-c k=--enable` is not a flag.
fn feature_flags_in(args: impl Iterator<Item = String>) -> (Vec<String>, Vec<String>) {
    let (mut enable, mut disable) = (Vec::new(), Vec::new());
    let mut args = args;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-c" | "--config" => {
                args.next();
            }
            "--enable" => enable.extend(args.next()),
            "--disable" => disable.extend(args.next()),
            other => {
                if let Some(name) = other.strip_prefix("--enable=") {
                    enable.push(name.to_string());
                } else if let Some(name) = other.strip_prefix("--disable=") {
                    disable.push(name.to_string());
                }
            }
        }
    }
    (enable, disable)
}

fn init_logging(default_filter: &str) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    // tungstenite logs each WebSocket handshake request whole at trace level, API key headers and
    // query included; nothing below debug is taken from it, whatever RUST_LOG asks.
    let filter = match "tungstenite::handshake::client=debug".parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    if std::env::var("LOG_FORMAT").is_ok_and(|format| format == "json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn main() -> std::process::ExitCode {
    // Started by bwrap as the sandbox helper: confine this process and become the command.
    openturn::sandbox::run_helper_if_asked();
    let cli = Cli::parse();
    // openturn's own info lines (shutdown reasons, index rebuilds) are worth seeing by default,
    // except in exec, where stderr is part of what a person reads.
    init_logging(match cli.command {
        Command::Exec(_) => "warn",
        _ => "warn,openturn=info",
    });
    exit_with(start(cli))
}

/// Runs the command; returns the process exit code.
fn start(cli: Cli) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let result = runtime.block_on(run(cli));
    // The stdin reader is a blocking thread that may still be waiting for input (shutdown by
    // SIGTERM or a closed stdout): do not wait for it. Rollouts are already flushed by then.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    result
}

/// Prints an error and its causes on one line and exits 1. Returning the error from `main`
/// instead would print a backtrace whenever RUST_BACKTRACE is set, which for a mistake in
/// the user's configuration only buries the one line that says what to fix.
fn exit_with(result: anyhow::Result<u8>) -> std::process::ExitCode {
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(error) => {
            eprintln!("openturn: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `-c` only means something to a command that loads the configuration; elsewhere it would
/// be dropped without a word, so it is refused instead.
fn refuse_unused_overrides(cli: &Cli, command: &str) -> anyhow::Result<()> {
    match cli.config.first() {
        Some(first) => anyhow::bail!(
            "`-c {first}` has no effect on `openturn {command}`, which does not read \
             config.toml; remove it (it applies to commands that run the agent, such as \
             `app-server`)"
        ),
        None => Ok(()),
    }
}

async fn run(cli: Cli) -> anyhow::Result<u8> {
    let home = default_home();
    match &cli.command {
        Command::Demo => refuse_unused_overrides(&cli, "demo")?,
        Command::Schema { .. } => refuse_unused_overrides(&cli, "schema")?,
        _ => {}
    }
    // Feature flags are config overrides; `-c` given explicitly comes last and so wins. clap
    // keeps only the subcommand's occurrences of a global flag given on both sides of it, so
    // the flags are read from the command line itself, every occurrence in order.
    let (enable, disable) = feature_flags_in(std::env::args().skip(1));
    debug_assert!(cli.enable.iter().all(|name| enable.contains(name)));
    debug_assert!(cli.disable.iter().all(|name| disable.contains(name)));
    let (mut overrides, warnings) = feature_overrides(&enable, &disable);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    overrides.extend(cli.config.iter().cloned());
    match cli.command {
        Command::AppServer { listen, stdio: _ } => {
            if listen != "stdio://" {
                anyhow::bail!("unsupported --listen `{listen}`: only stdio:// is supported");
            }
            let config = Config::load(&home, &overrides).context("loading configuration")?;
            openturn::server::prepare_daemon(&config);
            openturn::server::run_stdio(config).await?;
        }
        Command::Demo => {
            let exe = std::env::current_exe().context("locating the openturn binary")?;
            let mut stdout = std::io::stdout();
            openturn::demo::run(&exe, &mut stdout).await?;
        }
        Command::Exec(args) => {
            let mut exec_overrides = args.config_overrides();
            exec_overrides.extend(overrides);
            let config = Config::load(&home, &exec_overrides).context("loading configuration")?;
            openturn::server::prepare_daemon(&config);
            let serve = move |input, output| openturn::server::serve(config, input, output);
            let code = openturn::exec::run(*args, serve).await?;
            return Ok(u8::try_from(code).unwrap_or(1));
        }
        Command::Schema { out } => {
            openturn::server::schema::write_schema(&out)
                .with_context(|| format!("writing the schema into {}", out.display()))?;
        }
    }
    Ok(0)
}
