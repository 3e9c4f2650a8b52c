//! Configuration that says what is wrong, through the real binary:
//!
//! - a value of the wrong kind stops the daemon with one line naming the key, the file or `-c`
//!   flag it came from, what was expected and what was given; no backtrace even with
//!   `RUST_BACKTRACE=1`, and a non-zero exit;
//! - an empty `model` is such an error;
//! - an unknown key is ignored with a warning naming the closest known key, on stderr and to
//!   the client as `configWarning` after `initialize`; so is a Codex-only setting and a
//!   `sandbox_mode` nothing enforces (accepted but not acted on is never silent);
//! - `thread/start`'s `config` object gets the same check: a bad value is -32602 naming the key,
//!   an unknown key a `configWarning`;
//! - the reference's keys that clients send with every thread (`features`, `projects`, `tools`,
//!   as the ACP bridge does) are accepted without a word, while a misspelt one still warns;
//! - `-c` given to a command that does not read configuration is refused, not dropped;
//! - a `[model_providers.X]` table without `base_url` (which would send to OpenAI) is an error
//!   naming the table and the file or flag, or a warning when the table says it is OpenAI.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::*;

/// Runs `openturn ARGS` with `home`, RUST_BACKTRACE=1 and no stdin; returns its output.
fn run_openturn(home: &Path, args: &[&str]) -> Output {
    std::process::Command::new(openturn_bin())
        .args(args)
        .env("OPENTURN_HOME", home)
        .env("RUST_BACKTRACE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run openturn")
}

/// The run failed with exit code 1, printed nothing on stdout, no backtrace on stderr, and a
/// stderr line containing `expected`.
fn assert_user_error(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty(), "stdout carries protocol only");
    assert!(
        stderr.lines().any(|line| line.contains(expected)),
        "no line with {expected:?} in:\n{stderr}"
    );
    assert!(
        !stderr.contains("backtrace") && !stderr.contains("at /"),
        "a user error prints no backtrace:\n{stderr}"
    );
}

fn home_with(config_toml: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config_toml).unwrap();
    home
}

#[test]
fn an_invalid_value_in_the_file_names_key_file_and_expectation() {
    let home = home_with("approval_policy = \"sometimes\"\n");
    let file = home.path().join("config.toml");
    let output = run_openturn(home.path(), &["app-server"]);
    assert_user_error(
        &output,
        &format!(
            "invalid value for `approval_policy` in {}: expected one of untrusted, on-request, \
             never; got \"sometimes\"",
            file.display()
        ),
    );
}

#[test]
fn an_invalid_value_in_a_flag_names_the_flag() {
    let home = tempfile::tempdir().unwrap();
    let flag = "model_providers.local.request_max_retries=many";
    let output = run_openturn(home.path(), &["-c", flag, "app-server"]);
    assert_user_error(
        &output,
        &format!(
            "invalid value for `model_providers.local.request_max_retries` in `-c {flag}`: \
             expected a whole number from 0 to 4294967295; got \"many\""
        ),
    );
}

#[test]
fn an_empty_model_is_an_error() {
    let home = home_with("model = \"\"\n");
    let output = run_openturn(home.path(), &["app-server"]);
    assert_user_error(&output, "invalid value for `model` in ");
    assert!(String::from_utf8_lossy(&output.stderr).contains("expected a non-empty string"));
}

#[test]
fn a_flag_on_a_command_that_reads_no_configuration_is_refused() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["-c", "model=\"x\"", "demo"][..],
        &["demo", "-c", "model=\"x\""][..],
    ] {
        let output = run_openturn(home.path(), args);
        assert_user_error(&output, "`-c model=\"x\"` has no effect on `openturn demo`");
    }
}

#[test]
fn a_provider_table_without_base_url_names_the_table_and_where_it_was_written() {
    let home = home_with("model_provider = \"local\"\n[model_providers.local]\nname = \"local\"\n");
    let file = home.path().join("config.toml");
    let output = run_openturn(home.path(), &["app-server"]);
    assert_user_error(
        &output,
        &format!(
            "[model_providers.local] in {} has no `base_url`: without it its requests would go \
             to OpenAI",
            file.display()
        ),
    );
    let home = tempfile::tempdir().unwrap();
    let flag = "model_providers.ollama.env_key=OLLAMA_KEY";
    let output = run_openturn(home.path(), &["-c", flag, "exec", "hi"]);
    assert_user_error(
        &output,
        &format!("[model_providers.ollama] in `-c {flag}` has no `base_url`"),
    );
}

#[tokio::test]
async fn a_provider_table_that_says_openai_without_base_url_gets_a_warning() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = home_with("[model_providers.proxy]\nname = \"OpenAI via proxy\"\n");
    let file = home.path().join("config.toml").display().to_string();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let warning = daemon.notification("configWarning").await;
    assert_eq!(
        warning["params"]["summary"],
        format!(
            "[model_providers.proxy] in {file} has no `base_url`, so it sends to OpenAI \
             (https://api.openai.com/v1); write base_url to say so"
        )
    );
    assert_eq!(warning["params"]["path"], json!(file));
}

/// Waits (bounded) until the daemon's stderr has a line containing `text`.
async fn stderr_line(daemon: &Daemon, text: &str) -> String {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(line) = daemon.stderr().into_iter().find(|l| l.contains(text)) {
            return line;
        }
        assert!(
            Instant::now() < deadline,
            "no stderr line with {text:?}: {:?}",
            daemon.stderr()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The next `n` `configWarning` notifications' params.
async fn config_warnings(daemon: &mut Daemon, n: usize) -> Vec<Value> {
    let mut warnings = Vec::new();
    for _ in 0..n {
        warnings.push(daemon.notification("configWarning").await["params"].clone());
    }
    warnings
}

#[tokio::test]
async fn unknown_keys_warn_on_stderr_and_to_the_client_with_the_closest_key() {
    let provider = MockProvider::start(Script::new([text_reply(0, "still works")]))
        .await
        .unwrap();
    let home = home_with(
        "modle = \"gpt-5-mini\"\nhistory = {}\n\
         [model_providers.mock]\nbas_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let file = home.path().join("config.toml").display().to_string();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let warnings = config_warnings(&mut daemon, 3).await;
    let summaries: Vec<&str> = warnings
        .iter()
        .map(|w| w["summary"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        summaries,
        vec![
            format!(
                "`history` in {file} is a Codex setting that openturn does not act on; it \
                 is ignored"
            ),
            format!(
                "unknown configuration key `model_providers.mock.bas_url` in {file} is ignored; \
                 did you mean `model_providers.mock.base_url`?"
            ),
            format!(
                "unknown configuration key `modle` in {file} is ignored; did you mean `model`?"
            ),
        ]
    );
    assert!(warnings.iter().all(|w| w["path"] == json!(file)));
    for summary in &summaries {
        stderr_line(&daemon, summary).await;
    }
    // Warnings do not stop the daemon: a turn still runs.
    let thread_id = daemon.start_thread(json!({})).await;
    let turn = text_turn(&mut daemon, &thread_id, "hi").await;
    let end = turn.last().cloned().unwrap_or_default();
    assert_eq!(end["params"]["turn"]["status"], "completed", "{turn:#?}");
}

#[tokio::test]
async fn a_clean_configuration_sends_no_warning() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = home_with("model = \"gpt-5\"\napproval_policy = \"never\"\n");
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    // `config/read` answers after anything sent right after `initialize`.
    daemon.ok("config/read", json!({})).await;
    assert!(
        !methods(&daemon.transcript).contains(&"configWarning".to_string()),
        "{:?}",
        methods(&daemon.transcript)
    );
}

#[tokio::test]
async fn a_thread_config_object_gets_the_same_checks() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let error = daemon
        .err(
            "thread/start",
            json!({"config": {"approval_policy": "sometimes"}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(
        error["message"],
        "invalid value for `approval_policy` in the request's `config`: expected one of \
         untrusted, on-request, never; got \"sometimes\""
    );
    assert_eq!(error["data"]["key"], "approval_policy");
    let error = daemon
        .err("thread/start", json!({"config": {"model": ""}}))
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("`model`")),
        "{error}"
    );
    // An unknown key is accepted with a warning, and the thread starts.
    daemon
        .start_thread(json!({"config": {"model_providers.mock.stream_max_retrys": 1}}))
        .await;
    let warning = daemon.notification("configWarning").await;
    assert_eq!(
        warning["params"]["summary"],
        "unknown configuration key `model_providers.mock.stream_max_retrys` in the request's \
         `config` is ignored; did you mean `model_providers.mock.stream_max_retries`?"
    );
    assert!(warning["params"].get("path").is_none(), "{warning}");
}

#[tokio::test]
async fn an_empty_model_param_is_invalid_params() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let error = daemon.err("thread/start", json!({"model": " "})).await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("`model` must not be empty")),
        "{error}"
    );
    let thread_id = daemon.start_thread(json!({})).await;
    let error = daemon
        .err(
            "turn/start",
            json!({"threadId": thread_id, "model": "",
                "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(provider.requests().len(), 0, "nothing was sent");
}

#[tokio::test]
async fn the_keys_reference_clients_send_with_every_thread_pass_silently_and_typos_still_warn() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    // What the ACP bridge sends on every `thread/start`, plus the tool switches the reference reads.
    let bridge_config = json!({
        "features": {"cwd_relative_turn_diffs": false, "goals": true},
        "projects": {"/some/project": {"trust_level": "trusted"}},
        "tools": {"web_search": true, "view_image": {"enabled": false}},
        "skills": {"config": [{"name": "imagegen", "enabled": false}]},
        "sandbox_workspace_write": {"writable_roots": ["/some/project"]},
    });
    daemon
        .start_thread(json!({"config": bridge_config.clone()}))
        .await;
    daemon.start_thread(json!({"config": bridge_config})).await;
    // Warnings go out before the response they belong to: none arrived.
    assert!(
        !methods(&daemon.transcript).contains(&"configWarning".to_string()),
        "{:#?}",
        daemon.transcript
    );

    daemon
        .start_thread(json!({"config": {
            "featurs": {"goals": true},
            "features": {"golas": true},
            "tools": {"web_serch": true},
        }}))
        .await;
    let warnings = config_warnings(&mut daemon, 3).await;
    let mut summaries: Vec<&str> = warnings
        .iter()
        .map(|w| w["summary"].as_str().unwrap_or_default())
        .collect();
    summaries.sort();
    assert_eq!(
        summaries,
        vec![
            "unknown configuration key `featurs` in the request's `config` is ignored; did you \
             mean `features`?",
            "unknown configuration key `tools.web_serch` in the request's `config` is ignored; \
             did you mean `tools.web_search`?",
            "unknown feature `features.golas` in the request's `config` is ignored; did you mean \
             `features.goals`?",
        ]
    );

    // A switch that is neither on nor off, or a trust level the reference does not have, is
    // refused like any value of the wrong kind.
    let error = daemon
        .err(
            "thread/start",
            json!({"config": {"features": {"goals": "yes"}}}),
        )
        .await;
    assert_eq!(error["data"]["key"], "features.goals", "{error}");
    let error = daemon
        .err(
            "thread/start",
            json!({"config": {"projects": {"/p": {"trust_level": "somewhat"}}}}),
        )
        .await;
    assert_eq!(error["data"]["key"], "projects./p.trust_level", "{error}");
}
