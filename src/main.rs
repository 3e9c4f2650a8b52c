//! The `openturn` binary: command-line parsing, logging setup, and nothing else.

use anyhow::Context;
use clap::{CommandFactory, Parser, Subcommand};

use openturn::config::{default_home, feature_overrides, Config};
use openturn::mock_provider::{demo_responder, MockProvider, Script};

/// Where openturn reads its settings and keys, shown at the end of `--help`.
const FILES_AND_ENVIRONMENT: &str = "\
Files and environment:
  OPENTURN_HOME          openturn's folder, default ~/.openturn: config.toml, sessions/ (threads),
                         auth.json (a key stored by a client)
  $OPENTURN_HOME/config.toml
                         the configuration; -c KEY=VALUE overrides one key for this process
                         (docs/config.example.toml in the source lists every key)
  OPENAI_API_KEY         the key of the default provider (OpenAI); another provider's key is the
                         variable its `env_key` names (e.g. AZURE_OPENAI_API_KEY)
  CODEX_API_KEY          `exec` only: a key for the default provider (what the TypeScript SDK sends)
  RUST_LOG, LOG_FORMAT   logging on stderr (e.g. RUST_LOG=debug, LOG_FORMAT=json)

Try it offline, without a key:
  openturn -c model_provider=demo exec \"give me the tour\"";

#[derive(Parser)]
#[command(
    name = "openturn",
    version,
    about = "A Responses-API agent daemon for editors, SDKs and scripts",
    after_help = FILES_AND_ENVIRONMENT
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
    /// Serve the app-server JSON-RPC protocol on stdin/stdout, a Unix socket or WebSocket.
    AppServer {
        /// Transport endpoint URL: `stdio://` (default), `unix://` (the default socket under
        /// $OPENTURN_HOME), `unix://PATH`, `ws://IP:PORT`, `off`.
        #[arg(long, value_name = "URL", default_value = "stdio://")]
        listen: String,
        /// Same as `--listen stdio://`.
        #[arg(long)]
        stdio: bool,
        #[command(flatten)]
        ws_auth: openturn::server::listen::auth::WsAuthArgs,
        #[command(subcommand)]
        command: Option<AppServerCommand>,
    },
    /// Run a short scripted session offline: a built-in loopback provider replays shipped
    /// transcripts, and the live notification stream is printed.
    Demo,
    /// Run one turn headless: JSON events (`--json`) or text for a person. Wire-compatible with
    /// `codex exec --json`, so the official TypeScript SDK drives it.
    Exec(Box<openturn::exec::ExecArgs>),
    /// Print a shell completion script: `openturn completions bash > /etc/bash_completion.d/openturn`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Write the protocol's JSON Schema (generated from the protocol types) into a folder.
    Schema {
        /// Output folder; the checked-in copy lives in `schema/`.
        #[arg(long, default_value = "schema")]
        out: std::path::PathBuf,
    },
}

#[derive(Subcommand)]
enum AppServerCommand {
    /// Manage the background daemon on the default socket under $OPENTURN_HOME.
    Daemon {
        #[command(subcommand)]
        action: DaemonAction,
    },
    /// Bridge stdin/stdout to a running daemon's socket, one JSON message per line.
    Proxy {
        /// The daemon's Unix socket; the default socket when absent.
        #[arg(long = "sock", value_name = "SOCKET_PATH")]
        sock: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand)]
enum DaemonAction {
    /// Start the daemon unless one is already running.
    Start,
    /// Stop the daemon: gracefully, then forcibly after a grace period.
    Stop,
    /// Stop the daemon, then start it again.
    Restart,
    /// Print this binary's and the running daemon's versions as JSON.
    Version,
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

/// How the process ends: with an exit code, or by a signal's default action (`openturn exec`
/// after SIGTERM or SIGHUP, as the reference's exec does).
enum Ending {
    Code(u8),
    Signal(i32),
}

/// Runs the command; returns how the process ends.
fn start(cli: Cli) -> anyhow::Result<Ending> {
    // Before anything is spawned: the children the process already has are not its to kill.
    openturn::supervisor::start();
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
fn exit_with(result: anyhow::Result<Ending>) -> std::process::ExitCode {
    match result {
        Ok(Ending::Code(code)) => std::process::ExitCode::from(code),
        Ok(Ending::Signal(signal)) => die_by(signal),
        Err(error) => {
            eprintln!("openturn: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Ends the process by `signal`'s default action, so the parent sees it killed by that signal.
/// Called once everything is written and the runtime is down.
fn die_by(signal: i32) -> std::process::ExitCode {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // SAFETY: restores the default action of a signal of our own (the runtime's handler would
    // otherwise catch it) and raises it in this process; nothing else runs any more.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    // Only reached if the signal did not end the process: the shell's convention for it.
    std::process::ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
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

/// The built-in `demo` provider, started in this process when the configuration chooses it: the
/// loopback mock provider (127.0.0.1, a free port) answering every request from the scripted
/// demo answers, so every command runs without a key or a network.
async fn start_demo_provider(config: &mut Config) -> anyhow::Result<Option<MockProvider>> {
    if !config.wants_demo_provider() {
        return Ok(None);
    }
    let provider = MockProvider::start(Script::answering(demo_responder()))
        .await
        .context("starting the built-in demo provider")?;
    config.attach_demo_provider(&provider.base_url());
    tracing::info!(
        base_url = %provider.base_url(),
        "model_provider is `demo`: scripted offline answers from a loopback provider"
    );
    Ok(Some(provider))
}

async fn stop_demo_provider(provider: Option<MockProvider>) {
    if let Some(provider) = provider {
        provider.shutdown().await;
    }
}

async fn run(cli: Cli) -> anyhow::Result<Ending> {
    let home = default_home();
    match &cli.command {
        Command::Demo => refuse_unused_overrides(&cli, "demo")?,
        Command::Schema { .. } => refuse_unused_overrides(&cli, "schema")?,
        Command::Completions { .. } => refuse_unused_overrides(&cli, "completions")?,
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
        Command::AppServer {
            command: Some(command),
            ..
        } => {
            use openturn::server::listen::control;
            // The daemon is started with the same configuration flags as this command.
            let flags: Vec<String> = overrides
                .iter()
                .flat_map(|o| ["-c".to_string(), o.clone()])
                .collect();
            match command {
                AppServerCommand::Proxy { sock } => {
                    let sock =
                        sock.unwrap_or_else(|| openturn::server::listen::default_socket(&home));
                    control::proxy(&sock).await?;
                }
                AppServerCommand::Daemon { action } => {
                    let report = match action {
                        DaemonAction::Start => control::start(&home, &flags).await?,
                        DaemonAction::Stop => control::stop(&home).await?,
                        DaemonAction::Restart => {
                            control::stop(&home).await?;
                            control::start(&home, &flags).await?
                        }
                        DaemonAction::Version => control::version(&home)?,
                    };
                    println!("{report}");
                }
            }
        }
        Command::AppServer {
            listen,
            stdio,
            ws_auth,
            command: None,
        } => {
            use openturn::server::listen::{self, auth::WsAuth, ListenAddress};
            let listen = if stdio {
                "stdio://".to_string()
            } else {
                listen
            };
            let address = ListenAddress::parse(&listen, &home)?;
            let auth = WsAuth::from_args(&ws_auth)?;
            let mut config = Config::load(&home, &overrides).context("loading configuration")?;
            let demo = start_demo_provider(&mut config).await?;
            openturn::server::prepare_daemon(&config);
            match address {
                ListenAddress::Stdio => openturn::server::run_stdio(config).await?,
                address => listen::run(config, address, auth).await?,
            }
            stop_demo_provider(demo).await;
        }
        Command::Demo => {
            let exe = std::env::current_exe().context("locating the openturn binary")?;
            let mut stdout = std::io::stdout();
            openturn::demo::run(&exe, &mut stdout).await?;
        }
        Command::Exec(args) if args.remote.is_some() => {
            let url = args.remote.clone().unwrap_or_default();
            let token = match &args.remote_auth_token_env {
                Some(var) => Some(std::env::var(var).with_context(|| {
                    format!("--remote-auth-token-env: the variable {var} is not set")
                })?),
                None => None,
            };
            let remote = openturn::server::listen::control::connect(&url, token).await?;
            let serve = move |input, output| {
                openturn::server::listen::control::bridge(remote, input, output)
            };
            return Ok(match openturn::exec::run(*args, serve).await? {
                openturn::exec::ExecEnd::Code(code) => {
                    Ending::Code(u8::try_from(code).unwrap_or(1))
                }
                openturn::exec::ExecEnd::Signal(signal) => Ending::Signal(signal),
            });
        }
        Command::Exec(args) => {
            let mut exec_overrides = args.config_overrides();
            exec_overrides.extend(overrides);
            let mut config =
                Config::load(&home, &exec_overrides).context("loading configuration")?;
            let demo = start_demo_provider(&mut config).await?;
            openturn::server::prepare_daemon(&config);
            let serve = move |input, output| openturn::server::serve(config, input, output);
            let ending = openturn::exec::run(*args, serve).await;
            stop_demo_provider(demo).await;
            return Ok(match ending? {
                openturn::exec::ExecEnd::Code(code) => {
                    Ending::Code(u8::try_from(code).unwrap_or(1))
                }
                openturn::exec::ExecEnd::Signal(signal) => Ending::Signal(signal),
            });
        }
        Command::Completions { shell } => {
            // Generated into memory first: the generator panics on a write error, and a reader
            // that stops early (`| head`) is not an error worth a panic.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "openturn", &mut script);
            let mut stdout = std::io::stdout().lock();
            match std::io::Write::write_all(&mut stdout, &script) {
                Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(error).context("writing the completion script");
                }
                _ => {}
            }
        }
        Command::Schema { out } => {
            openturn::server::schema::write_schema(&out)
                .with_context(|| format!("writing the schema into {}", out.display()))?;
        }
    }
    Ok(Ending::Code(0))
}
