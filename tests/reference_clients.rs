//! The Codex CLI's own remote clients drive an openturn listener unchanged (docs/REMOTE.md):
//! `codex exec --remote ws://… --remote-auth-token-env VAR` streams a turn that runs a command
//! (exec asks for `approvalPolicy: never`, so the command runs in the sandbox unasked), then
//! `codex exec --remote … resume ID` continues that thread with its history; and the
//! interactive TUI, `codex --remote ws://…` under tmux, sends a prompt, shows the command
//! approval, is answered with `y`, shows the command's output and the model's answer, and quits
//! with `/quit`, while an `exec --remote` streams a turn of its own on the same daemon.
//!
//! `scripts/test` installs the pinned CLI (`tests/codex_cli/package.json`) into
//! `tests/codex_cli/node_modules` and points `OPENTURN_CODEX_CLI` at it; the variable may name
//! any Codex 0.171.0 binary. Without the CLI or tmux the tests are skipped with the reason
//! printed, except under `CI=true`, where they fail: CI must never silently stop exercising
//! the reference's clients.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod listener_support;
mod support;
mod tmux_support;
mod turn_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use listener_support::*;
use openturn::mock_provider::{RecordedRequest, Responder};
use serde_json::{json, Value};
use support::*;
use tmux_support::Tmux;
use turn_support::*;

/// The variable the clients read the daemon's token from.
pub const TOKEN_VAR: &str = "OPENTURN_REMOTE_TOKEN";
pub const TOKEN: &str = "reference-clients-token";
/// How long one CLI run may take: the CLI starts cold (a 300 MB binary) on a busy machine.
const CLI_TIMEOUT: Duration = Duration::from_secs(90);

/// The Codex CLI to run, or why the test cannot run here.
fn codex_cli() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("OPENTURN_CODEX_CLI") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "OPENTURN_CODEX_CLI={} is not a file",
                path.display()
            ))
        };
    }
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codex_cli/node_modules/.bin/codex");
    if installed.is_file() {
        Ok(installed)
    } else {
        Err(format!(
            "{} is missing: run scripts/test (it installs @openai/codex with npm) or set \
             OPENTURN_CODEX_CLI to a Codex 0.171.0 binary",
            installed.display()
        ))
    }
}

fn tmux_available() -> Result<(), String> {
    match std::process::Command::new("tmux").arg("-V").output() {
        Ok(output) if output.status.success() => Ok(()),
        _ => Err("tmux is not on PATH (Debian: apt-get install tmux)".to_string()),
    }
}

/// What a test that cannot run does: fail under `CI=true`, say why and skip otherwise.
fn unavailable(reason: &str) {
    assert!(
        std::env::var("CI").map(|v| v != "true").unwrap_or(true),
        "CI=true but the Codex CLI tests cannot run: {reason}"
    );
    eprintln!("skipping: {reason}");
}

/// The text of the last message the user typed (not the context openturn adds).
fn prompt_of(body: &Value) -> String {
    user_texts(body)
        .into_iter()
        .rev()
        .find(|text| {
            let text = text.trim_start();
            !text.starts_with('<') && !text.starts_with("# AGENTS.md")
        })
        .unwrap_or_default()
}

/// The provider: what it answers depends on the request, because the TUI also starts a side
/// thread of its own (a title for the task) whose requests interleave with the turns.
fn answer(request: &RecordedRequest) -> Reply {
    let body = &request.body;
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    // After a command ran: report the marker line it printed.
    if let Some(output) = input
        .last()
        .filter(|item| item["type"] == "function_call_output")
    {
        let text = output["output"].as_str().unwrap_or_default();
        let marker = text
            .lines()
            .find(|line| line.contains("-42"))
            .unwrap_or("no marker");
        return message_reply(
            format!("r_{tag}"),
            &format!("m_{tag}"),
            &["done: ", marker.trim()],
        );
    }
    let prompt = prompt_of(body);
    if prompt.contains("Generate a concise") {
        return message_reply(format!("r_{tag}"), &format!("m_{tag}"), &["Check it"]);
    }
    let call = |arguments: Value| {
        ResponseBuilder::new(format!("r_{tag}"))
            .created()
            .text_message(&format!("m_{tag}"), &["Running ", "it."])
            .exec_call(&format!("fc_{tag}"), &format!("call_{tag}"), arguments)
            .completed(Usage::small(), None)
            .build()
    };
    if prompt.contains("escalated") {
        // Outside the sandbox: asks the user whatever the sandbox policy.
        return call(json!({"cmd": "echo tui-approved-$((40+2))", "login": false,
            "sandbox_permissions": "require_escalated", "justification": "Testing approvals"}));
    }
    if prompt.contains("run") {
        return call(json!({"cmd": "echo exec-ran-$((6*7))", "login": false}));
    }
    if prompt.contains("stream") {
        let pieces: Vec<String> = (0..40).map(|n| format!("piece{n} ")).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        return message_reply(format!("r_{tag}"), &format!("m_{tag}"), &pieces);
    }
    message_reply(
        format!("r_{tag}"),
        &format!("m_{tag}"),
        &["plain answer to: ", &prompt],
    )
}

/// A daemon on `ws://127.0.0.1:PORT` with capability-token auth, its provider and its home.
async fn token_daemon() -> (Listening, MockProvider, tempfile::TempDir) {
    let provider = MockProvider::start(Script::answering(Responder::new(answer)))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let token_file = home.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.push("approval_policy=\"on-request\"".to_string());
    let daemon = listen(
        home.path(),
        &overrides,
        "ws://127.0.0.1:0",
        &[
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            token_file.to_str().unwrap(),
        ],
    )
    .await;
    (daemon, provider, home)
}

/// The CLI's own state (config, logs) lives in `client_home`, never in the user's.
fn cli_command(cli: &Path, client_home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(cli);
    command
        .env("CODEX_HOME", client_home)
        .env("HOME", client_home)
        .env(TOKEN_VAR, TOKEN)
        .env("BAD_TOKEN", "not-the-token")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY")
        .env_remove("RUST_LOG")
        .current_dir(client_home)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

/// Runs `codex exec --json --remote URL --remote-auth-token-env VAR ARGS…`: its exit status
/// and its events.
async fn exec_remote(
    cli: &Path,
    client_home: &Path,
    url: &str,
    token_var: &str,
    args: &[&str],
) -> (std::process::ExitStatus, Vec<Value>, String) {
    let mut command = cli_command(cli, client_home);
    command
        .args(["exec", "--json", "--skip-git-repo-check", "--remote", url])
        .args(["--remote-auth-token-env", token_var])
        .args(args);
    let output = tokio::time::timeout(CLI_TIMEOUT, command.output())
        .await
        .expect("codex exec ends")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let events = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    (output.status, events, format!("{stdout}\n{stderr}"))
}

fn completed_items<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == kind)
        .map(|e| &e["item"])
        .collect()
}

fn started_thread(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str())
        .unwrap()
        .to_string()
}

// Multi-threaded: the mock provider serves the CLI from this runtime while the test waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_exec_remote_streams_a_command_turn_and_resumes_the_thread() {
    let cli = match codex_cli() {
        Ok(cli) => cli,
        Err(reason) => return unavailable(&reason),
    };
    let (daemon, provider, _home) = token_daemon().await;
    let client_home = tempfile::tempdir().unwrap();

    // A wrong token is refused at the upgrade: the CLI fails and starts nothing.
    let (status, _, output) = exec_remote(
        &cli,
        client_home.path(),
        &daemon.url,
        "BAD_TOKEN",
        &["please run the check"],
    )
    .await;
    assert!(!status.success(), "{output}");
    assert!(provider.requests().is_empty());

    let (status, events, output) = exec_remote(
        &cli,
        client_home.path(),
        &daemon.url,
        TOKEN_VAR,
        &["please run the check"],
    )
    .await;
    assert!(status.success(), "{output}");
    let thread_id = started_thread(&events);
    let commands = completed_items(&events, "command_execution");
    assert_eq!(commands.len(), 1, "{output}");
    assert_eq!(commands[0]["status"], "completed", "{output}");
    assert_eq!(commands[0]["exit_code"], 0, "{output}");
    assert!(
        commands[0]["aggregated_output"]
            .as_str()
            .unwrap()
            .contains("exec-ran-42"),
        "{output}"
    );
    let messages = completed_items(&events, "agent_message");
    assert_eq!(messages.last().unwrap()["text"], "done: exec-ran-42");
    assert!(events.iter().any(|e| e["type"] == "turn.completed"));

    // `resume ID` continues the same thread: the provider sees the first turn's history.
    let (status, events, output) = exec_remote(
        &cli,
        client_home.path(),
        &daemon.url,
        TOKEN_VAR,
        &["resume", &thread_id, "and now a follow-up"],
    )
    .await;
    assert!(status.success(), "{output}");
    assert_eq!(started_thread(&events), thread_id);
    let messages = completed_items(&events, "agent_message");
    assert_eq!(
        messages.last().unwrap()["text"],
        "plain answer to: and now a follow-up"
    );
    let last = provider.requests().last().cloned().unwrap();
    let texts = user_texts(&last.body);
    assert!(
        texts.iter().any(|t| t == "please run the check"),
        "{texts:?}"
    );
    assert!(call_outputs(&last.body)
        .iter()
        .any(|(_, out)| out.contains("exec-ran-42")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_codex_tui_answers_an_approval_while_an_exec_streams_on_the_same_daemon() {
    let cli = match codex_cli().and_then(|cli| tmux_available().map(|()| cli)) {
        Ok(cli) => cli,
        Err(reason) => return unavailable(&reason),
    };
    let (daemon, provider, _home) = token_daemon().await;
    let client_home = tempfile::tempdir().unwrap();
    // A connection of our own hears every thread's lifecycle, the TUI's included.
    let mut watcher = daemon.connect(Some(TOKEN)).await;
    watcher.initialize().await;

    let tmux = Tmux::new(client_home.path());
    tmux.start_tui(
        &cli,
        client_home.path(),
        &daemon.url,
        Some((TOKEN_VAR, TOKEN)),
    );

    // The TUI starts a thread at once; its prompt takes keys once drawn.
    let started = watcher
        .collect_until(|m| m["method"] == "thread/started")
        .await;
    let tui_thread = started.last().unwrap()["params"]["thread"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    tmux.wait_for("OpenAI Codex").await;
    tmux.submit("please run the escalated check", || {
        provider
            .requests()
            .iter()
            .any(|r| prompt_of(&r.body) == "please run the escalated check")
    })
    .await;
    tmux.wait_for("Would you like to run the following command?")
        .await;
    tmux.wait_for("echo tui-approved-$((40+2))").await;

    // While the TUI waits for its user, exec streams a turn of its own on the same daemon.
    let (status, events, output) = exec_remote(
        &cli,
        client_home.path(),
        &daemon.url,
        TOKEN_VAR,
        &["stream a long answer"],
    )
    .await;
    assert!(status.success(), "{output}");
    assert_ne!(started_thread(&events), tui_thread);
    let expected: String = (0..40).map(|n| format!("piece{n} ")).collect();
    let messages = completed_items(&events, "agent_message");
    assert_eq!(messages.last().unwrap()["text"].as_str().unwrap(), expected);
    assert!(
        tmux.pane()
            .contains("Would you like to run the following command?"),
        "the TUI still waits for its answer"
    );

    // `y` approves: the command runs and the answer reaches the pane.
    tmux.keys(&["y"]);
    tmux.wait_for("done: tui-approved-42").await;
    assert!(
        provider.requests().iter().any(|r| call_outputs(&r.body)
            .iter()
            .any(|(_, out)| out.contains("tui-approved-42"))),
        "the approved command ran"
    );

    // `/quit` ends the CLI normally, whatever else ran on the daemon meanwhile.
    assert_eq!(tmux.quit().await, "0", "{}", tmux.pane());
}

/// With the built-in `demo` provider, which takes no key, the TUI (here over the Unix socket)
/// goes straight to its prompt: `account/read` does not send it to a sign-in screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_codex_tui_talks_to_the_demo_provider_over_the_unix_socket() {
    let cli = match codex_cli().and_then(|cli| tmux_available().map(|()| cli)) {
        Ok(cli) => cli,
        Err(reason) => return unavailable(&reason),
    };
    let home = tempfile::tempdir().unwrap();
    let socket = home.path().join("daemon.sock");
    let daemon = listen(
        home.path(),
        &["model_provider=\"demo\"".to_string()],
        &format!("unix://{}", socket.display()),
        &[],
    )
    .await;
    let client_home = tempfile::tempdir().unwrap();
    let tmux = Tmux::new(client_home.path());
    tmux.start_tui(&cli, client_home.path(), &daemon.url, None);
    tmux.wait_for("OpenAI Codex").await;
    let pane = tmux.pane();
    assert!(!pane.contains("Sign in"), "{pane}");
    tmux.submit("hello there", || tmux.pane().contains("demo provider"))
        .await;
    assert_eq!(tmux.quit().await, "0", "{}", tmux.pane());
}
