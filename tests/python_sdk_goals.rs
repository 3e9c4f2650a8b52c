//! The official Python SDK's goal calls (`openai-codex` 0.163.0) against openturn: the SDK's goal
//! operation sets an active goal, follows the turns the server starts by itself until the model
//! completes the goal, then reads, pauses and clears it (`tests/sdk/goal.py`).
//!
//! The SDK lives in the virtualenv `.ci/run` creates (`OPENTURN_SDK_PYTHON`); without it the test
//! is skipped locally but fails under `CI=true`, as in `tests/python_sdk.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::process::Command;

use serde_json::json;
use support::*;
use turn_support::*;

fn sdk_python() -> Option<std::ffi::OsString> {
    let python = std::env::var_os("OPENTURN_SDK_PYTHON");
    if python.is_none() {
        assert!(
            std::env::var("CI").map(|v| v != "true").unwrap_or(true),
            "CI=true but OPENTURN_SDK_PYTHON is not set: .ci/run must install the SDK"
        );
        eprintln!("skipping: set OPENTURN_SDK_PYTHON to a python with openai-codex==0.163.0");
    }
    python
}

#[tokio::test]
async fn the_official_python_sdk_sets_follows_reads_pauses_and_clears_a_goal() {
    let Some(python) = sdk_python() else {
        return;
    };
    let update = ResponseBuilder::new("r1")
        .created()
        .function_call_json(
            "fc_1",
            "call_1",
            "update_goal",
            json!({"status": "complete"}),
        )
        .completed(Usage::small(), None)
        .build();
    let provider = MockProvider::start(Script::new([
        message_reply("r0", "m0", &["Working on it."]),
        update,
        message_reply("r2", "m2", &["hello.txt is written."]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk/goal.py");
    let (base_url, home_path) = (provider.base_url(), home.path().to_path_buf());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(openturn_bin())
            .arg(base_url)
            .arg(home_path)
            .output()
    })
    .await
    .unwrap()
    .expect("running python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "SDK script failed:\nstdout: {stdout}\nstderr: {stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.trim().lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("SDK script printed {stdout:?}: {e}"));
    assert_eq!(
        summary,
        json!({
            "completed_turns": 1,
            "completed_status": "completed",
            "goal_after_run": {"objective": "Write hello.txt", "status": "complete"},
            "paused_status": "paused",
            "cleared": true,
            "cleared_again": false,
            "goal_after_clear": null,
        })
    );
    // Two goal turns: the first made no call, the second completed the goal with update_goal.
    assert_eq!(provider.requests().len(), 3);
}
