//! Keys the reference writes as `null` (or with a fixed value) are present in openturn's
//! output too, so clients that index them instead of probing find them (docs/PROTOCOL.md §4, §7):
//! the `Thread` object in every thread result and `thread/started`, the start/resume results,
//! and `account/rateLimits/updated`. Observed against the reference 0.169.0 with a mock provider.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// Keys of the reference's `Thread` and rate-limit snapshot that openturn has no value for.
const THREAD_NULL_KEYS: [&str; 3] = ["extra", "attachedToThreadId", "daybreakEnabled"];
const RATE_LIMIT_NULL_KEYS: [&str; 4] = [
    "normalModelSlug",
    "individualLimit",
    "spendControlReached",
    "rateLimitReachedType",
];

fn assert_null_keys(object: &Value, keys: &[&str], what: &str) {
    for key in keys {
        assert_eq!(
            object.get(*key),
            Some(&Value::Null),
            "{what} lacks `{key}`: {object}"
        );
    }
}

fn assert_thread_shape(thread: &Value, what: &str) {
    assert_null_keys(thread, &THREAD_NULL_KEYS, what);
    assert_eq!(thread["canAcceptDirectInput"], true, "{what}: {thread}");
    let cwd = thread["cwd"].clone();
    assert_eq!(
        thread["environments"],
        json!([{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}]),
        "{what}"
    );
}

fn assert_start_result_shape(result: &Value, what: &str) {
    assert_thread_shape(&result["thread"], what);
    assert_null_keys(result, &["activePermissionProfile"], what);
    assert_eq!(
        result["runtimeWorkspaceRoots"],
        json!([result["cwd"]]),
        "{what}"
    );
}

#[tokio::test]
async fn thread_results_and_notifications_carry_the_keys_the_reference_sends_as_null() {
    let provider = MockProvider::start(Script::new([text_reply(0, "Hello")]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let started = daemon.ok("thread/start", json!({})).await;
    assert_start_result_shape(&started, "thread/start");
    let thread_id = started["thread"]["id"].clone();
    let notification = daemon.notification("thread/started").await;
    assert_thread_shape(&notification["params"]["thread"], "thread/started");

    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let turn = daemon.until_turn_completed().await;
    let rate_limits = turn
        .iter()
        .find(|m| m["method"] == "account/rateLimits/updated")
        .unwrap_or_else(|| panic!("no account/rateLimits/updated in {turn:?}"));
    assert_null_keys(
        &rate_limits["params"]["rateLimits"],
        &RATE_LIMIT_NULL_KEYS,
        "account/rateLimits/updated",
    );

    let read = daemon
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    assert_thread_shape(&read["thread"], "thread/read");
    let resumed = daemon
        .ok("thread/resume", json!({"threadId": thread_id}))
        .await;
    assert_start_result_shape(&resumed, "thread/resume");
    assert_null_keys(&resumed, &["initialTurnsPage"], "thread/resume");
    let listed = daemon.ok("thread/list", json!({})).await;
    assert_thread_shape(&listed["data"][0], "thread/list");
}
