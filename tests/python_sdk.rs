//! The official Python SDK (`openai-codex` 0.163.0) drives openturn unchanged: it launches
//! `openturn --config k=v … app-server --listen stdio://`, and `thread_start()` then
//! `thread.run("hi")` returns the final text streamed by the provider. Its account calls
//! (`account()`, `login_api_key()`, `logout()`) and the options it gates on the server's
//! version (`turn_service_tier`, `source`, `include_turns`) work too, and so does
//! `Thread.compact()`.
//!
//! The SDK lives in a virtualenv that `.ci/run` creates; its interpreter is passed in
//! `OPENTURN_SDK_PYTHON`. Without it the test is skipped locally but fails under `CI=true`, so CI
//! can never silently stop exercising the SDK.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Command;

use support::*;

/// The SDK's interpreter, or `None` (after saying why) when the test must be skipped.
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
async fn the_official_python_sdk_runs_a_turn_against_openturn() {
    let Some(python) = sdk_python() else {
        return;
    };
    let provider = MockProvider::start(Script::new([Reply::Sse(
        mock_provider::simple_text_response("resp_sdk", "msg_sdk", "Hello from the SDK test", 4),
    )]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk/run_turn.py");
    let base_url = provider.base_url();
    let home_path = home.path().to_path_buf();
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
    let result: serde_json::Value =
        serde_json::from_str(stdout.trim().lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("SDK script printed {stdout:?}: {e}"));
    assert_eq!(result["final_response"], "Hello from the SDK test");
    assert_eq!(result["status"], "completed");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    // The environment context comes first; the user's message is the last input item.
    let input = requests[0].body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        input.last().map(|item| item["content"][0]["text"].clone()),
        Some(serde_json::json!("hi"))
    );
}

#[tokio::test]
async fn the_official_python_sdk_logs_in_runs_a_tiered_turn_and_logs_out() {
    let Some(python) = sdk_python() else {
        return;
    };
    let provider = MockProvider::start(Script::new([Reply::Sse(
        mock_provider::simple_text_response("resp_sdk", "msg_sdk", "Tiered hello", 3),
    )]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/sdk/account_and_options.py"
    );
    let key = "sk-sdk-login-key-42";
    let (base_url, home_path) = (provider.base_url(), home.path().to_path_buf());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(openturn_bin())
            .arg(base_url)
            .arg(home_path)
            .arg(key)
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
        serde_json::json!({
            "server_version": "0.171.0",
            "account_before": null,
            "requires_auth_before": true,
            "account_after_login": "apiKey",
            "final_response": "Tiered hello",
            "status": "completed",
            "resumed_turns": 1,
            "forked": true,
            "account_after_logout": null,
        })
    );
    // The turn went out with the logged-in key (the provider takes sign-in and has no key of its
    // own) and the turn's service tier.
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    assert_eq!(requests[0].body["service_tier"], "flex");
    assert!(
        !home.path().join("auth.json").exists(),
        "logout removes the key"
    );
    assert!(!stderr.contains(key), "the key reached the daemon's log");
}

/// `Thread.compact()` calls `thread/compact/start`: the SDK gets its (empty) response, the
/// compaction runs as a turn whose one item is `contextCompaction`, and the SDK's next turn is
/// sampled from the compacted history (the summary, not the first answer).
#[tokio::test]
async fn the_official_python_sdk_compacts_a_thread() {
    let Some(python) = sdk_python() else {
        return;
    };
    let provider = MockProvider::start(Script::new([
        text_reply(0, "the first answer"),
        text_reply(1, "SDK-SUMMARY"),
        text_reply(2, "the second answer"),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk/compact.py");
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
    let seen: serde_json::Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("SDK script printed {stdout:?}: {e}"));
    assert_eq!(
        seen,
        serde_json::json!({
            "first": "the first answer",
            "compact_response": {},
            "compaction_status": "completed",
            "compaction_items": ["contextCompaction"],
            "second": "the second answer",
            "turns": 3,
        })
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    let last = requests[2].body.to_string();
    assert!(last.contains("SDK-SUMMARY") && !last.contains("the first answer"));
}
