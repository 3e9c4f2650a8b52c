//! The official Codex TypeScript SDK (`@openai/codex-sdk` 0.163.0) drives `openturn exec`
//! unchanged through `codexPathOverride`: `runStreamed`, a tool call, `outputSchema`,
//! `resumeThread` and a failing turn (tests/ts_sdk/exec.test.mjs, run with `node --test`), and
//! an aborted run, which rejects with the SDK's own `AbortError` (tests/ts_sdk/abort.test.mjs).
//! Each scenario gets its own loopback mock provider; every event the SDK parsed is checked
//! against docs/exec-events.schema.json here.
//!
//! The SDK is installed into tests/ts_sdk/node_modules by scripts/test. Without node or the SDK
//! the test is skipped locally but fails under `CI=true`, so CI never silently stops exercising it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use std::path::Path;
use std::process::Command;

use exec_support::*;
use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn sdk_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ts_sdk"))
}

/// `node`, when it and the SDK are installed; `None` (skip) otherwise, except under CI.
fn node_or_skip() -> Option<&'static str> {
    let node_works = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let sdk_installed = sdk_dir()
        .join("node_modules/@openai/codex-sdk/package.json")
        .exists();
    if node_works && sdk_installed {
        return Some("node");
    }
    assert!(
        std::env::var("CI").map(|v| v != "true").unwrap_or(true),
        "CI=true but node or tests/ts_sdk/node_modules is missing: scripts/test must install the SDK"
    );
    eprintln!("skipping: needs node and `npm ci` in tests/ts_sdk (scripts/test does it)");
    None
}

#[tokio::test]
async fn the_official_typescript_sdk_drives_openturn_exec() {
    let Some(node) = node_or_skip() else {
        return;
    };
    let text = provider(vec![message_reply(
        "r1",
        "m1",
        &["Hello ", "from ", "openturn"],
    )])
    .await;
    let tool = provider(vec![
        ResponseBuilder::new("r1")
            .created()
            .exec_call(
                "fc_1",
                "call_1",
                json!({"cmd": "echo from-sdk-tool", "login": false}),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m2", &["The command ran."]),
    ])
    .await;
    let schema = provider(vec![message_reply(
        "r1",
        "m1",
        &["{\"answer\":", "\"forty-two\"}"],
    )])
    .await;
    let resume = provider(vec![
        message_reply("r1", "m1", &["Noted."]),
        message_reply("r2", "m2", &["It was 42."]),
    ])
    .await;
    let fail = provider(vec![mock_provider::error_status(
        400,
        "invalid_request",
        "the provider refused this request",
    )])
    .await;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let events_file = home.path().join("sdk-events.jsonl");
    let mut command = Command::new(node);
    command
        .args(["--test", "--test-concurrency=1", "exec.test.mjs"])
        .current_dir(sdk_dir())
        .env("OPENTURN_BIN", openturn_bin())
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_WORKDIR", work.path())
        .env("OPENTURN_SCHEMA_EVENTS_FILE", &events_file)
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY");
    for (name, mock) in [
        ("TEXT", &text),
        ("TOOL", &tool),
        ("SCHEMA", &schema),
        ("RESUME", &resume),
        ("FAIL", &fail),
    ] {
        command.env(format!("OPENTURN_MOCK_{name}_URL"), mock.base_url());
    }
    let output = tokio::time::timeout(
        TIMEOUT * 3,
        tokio::task::spawn_blocking(move || command.output()),
    )
    .await
    .expect("node --test did not finish in time")
    .unwrap()
    .expect("running node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("# pass 5"), "{stdout}");

    // Every event the SDK saw matches the documented schema.
    let recorded = std::fs::read_to_string(&events_file).unwrap();
    let events: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(events.len() >= 8, "{events:#?}");
    for event in &events {
        check_event(event);
    }
    // The SDK authenticated with its apiKey (CODEX_API_KEY) at its baseUrl.
    let first = &text.wait_for_requests(1, TIMEOUT).await[0];
    assert_eq!(first.header("authorization"), Some("Bearer sk-ts-sdk-test"));
    // outputSchema reached the provider as the request's text.format.
    let body = &schema.wait_for_requests(1, TIMEOUT).await[0].body;
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(
        body["text"]["format"]["schema"]["required"],
        json!(["answer"])
    );
    // The resumed turn carried the first turn's history.
    let bodies = resume.wait_for_requests(2, TIMEOUT).await;
    assert!(bodies[1].body["input"]
        .to_string()
        .contains("remember the number 42"));
}

/// The SDK's `signal` aborts a run: Node sends exec SIGTERM, exec interrupts the turn (recorded
/// in the rollout as interrupted) and ends as the reference does, without a `turn.failed`, so
/// the SDK rejects with its `AbortError` rather than with "turn interrupted".
#[tokio::test]
async fn an_aborted_typescript_sdk_run_rejects_with_its_abort_error() {
    let Some(node) = node_or_skip() else {
        return;
    };
    let stall = provider(vec![stalled_text_reply("msg_s", &["still ", "going"])]).await;
    let home = tempfile::tempdir().unwrap();
    let events_file = home.path().join("sdk-events.jsonl");
    let mut command = Command::new(node);
    command
        .args(["--test", "abort.test.mjs"])
        .current_dir(sdk_dir())
        .env("OPENTURN_BIN", openturn_bin())
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_SCHEMA_EVENTS_FILE", &events_file)
        .env("OPENTURN_MOCK_STALL_URL", stall.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY");
    let output = tokio::time::timeout(
        TIMEOUT * 3,
        tokio::task::spawn_blocking(move || command.output()),
    )
    .await
    .expect("node --test did not finish in time")
    .unwrap()
    .expect("running node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("# pass 1"), "{stdout}");
    let recorded = std::fs::read_to_string(&events_file).unwrap();
    let events: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for event in &events {
        check_event(event);
    }
    let thread_id = events[0]["thread_id"].as_str().unwrap_or_default();
    assert_one_turn_recorded_interrupted(home.path(), thread_id);
}
