//! The Codex TUI's plan mode on an openturn daemon (docs/REMOTE.md): under tmux, shift+tab
//! switches the TUI to the Plan preset it read from `collaborationMode/list`; a prompt then
//! runs in plan mode (the provider's request carries openturn's plan-mode instructions and the
//! preset's effort), and the model's proposed plan streams into the pane.
//!
//! The CLI is found as in `tests/reference_clients.rs` (`OPENTURN_CODEX_CLI`, or the pinned
//! package `scripts/test` installs); without it or tmux the test is skipped with the reason
//! printed, except under `CI=true`, where it fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod listener_support;
mod support;
mod tmux_support;
mod turn_support;

use std::path::{Path, PathBuf};

use listener_support::*;
use openturn::mock_provider::{RecordedRequest, Responder};
use serde_json::Value;
use support::*;
use tmux_support::Tmux;
use turn_support::*;

const PROMPT: &str = "plan the docs tidy-up";

/// The Codex CLI to run, or why the test cannot run here.
fn codex_cli() -> Result<PathBuf, String> {
    let path = match std::env::var_os("OPENTURN_CODEX_CLI") {
        Some(path) => PathBuf::from(path),
        None => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codex_cli/node_modules/.bin/codex")
        }
    };
    if !path.is_file() {
        return Err(format!(
            "no Codex CLI at {}: run scripts/test or set OPENTURN_CODEX_CLI",
            path.display()
        ));
    }
    match std::process::Command::new("tmux").arg("-V").output() {
        Ok(output) if output.status.success() => Ok(path),
        _ => Err("tmux is not on PATH".to_string()),
    }
}

fn in_plan_mode(body: &Value) -> bool {
    developer_texts(body)
        .iter()
        .any(|text| text.starts_with("<collaboration_mode>You are in Plan mode."))
}

/// The provider: a plan for a request in plan mode, a title for the TUI's side thread, and a
/// plain answer otherwise.
fn answer(request: &RecordedRequest) -> Reply {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let (response, item) = (format!("r_{tag}"), format!("m_{tag}"));
    let texts = user_texts(&request.body);
    if texts.iter().any(|text| text.contains("Generate a concise")) {
        return message_reply(response, &item, &["Tidy the docs"]);
    }
    if in_plan_mode(&request.body) {
        return message_reply(
            response,
            &item,
            &[
                "Here is the plan.\n<proposed_plan>\n# Tidy the docs\n",
                "- plan-step-marker\n</proposed_plan>\n",
            ],
        );
    }
    message_reply(response, &item, &["plain answer"])
}

async fn switch_to_plan_mode(tmux: &Tmux) {
    for _ in 0..5 {
        tmux.keys(&["BTab"]);
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
        while tokio::time::Instant::now() < deadline {
            if tmux.pane().contains("Plan mode") {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    panic!("the TUI never switched to plan mode:\n{}", tmux.pane());
}

// Multi-threaded: the mock provider serves the CLI from this runtime while the test waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_puts_the_tui_in_plan_mode_and_the_turn_runs_in_it() {
    let cli = match codex_cli() {
        Ok(cli) => cli,
        Err(reason) => {
            assert!(
                std::env::var("CI").map(|v| v != "true").unwrap_or(true),
                "CI=true but the Codex CLI test cannot run: {reason}"
            );
            return eprintln!("skipping: {reason}");
        }
    };
    let provider = MockProvider::start(Script::answering(Responder::new(answer)))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let socket = home.path().join("daemon.sock");
    let daemon = listen(
        home.path(),
        &mock_overrides(&provider),
        &format!("unix://{}", socket.display()),
        &[],
    )
    .await;
    let client_home = tempfile::tempdir().unwrap();
    let tmux = Tmux::new(client_home.path());
    tmux.start_tui(&cli, client_home.path(), &daemon.url, None);
    tmux.wait_for("OpenAI Codex").await;

    // The TUI's mode switch; its footer names the mode once the switch is done. A key that
    // arrives before the composer takes keys is lost, so it is sent again when the footer has
    // not shown plan mode within seconds (never once it has, which would cycle past plan).
    tmux.wait_for("Ask Codex to do anything").await;
    switch_to_plan_mode(&tmux).await;
    let sent = || {
        provider
            .requests()
            .iter()
            .any(|r| user_texts(&r.body).iter().any(|text| text == PROMPT))
    };
    tmux.submit(PROMPT, sent).await;
    tmux.wait_for("plan-step-marker").await;

    let requests = provider.requests();
    let turn = requests
        .iter()
        .find(|r| user_texts(&r.body).iter().any(|text| text == PROMPT))
        .unwrap();
    assert!(
        in_plan_mode(&turn.body),
        "{:?}",
        developer_texts(&turn.body)
    );
    assert_eq!(turn.body["reasoning"]["effort"], "medium");
}
