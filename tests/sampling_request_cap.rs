//! The follow-up loop is bounded: a model that answers every request with another tool call
//! makes the turn fail after `max_sampling_requests_per_turn` requests, with an error naming
//! the key, instead of looping forever. Every call made so far still has its output recorded.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::json;
use support::*;
use turn_support::*;

#[tokio::test]
async fn a_model_that_always_calls_a_tool_fails_the_turn_at_the_request_cap() {
    let always_a_tool_call = ResponseBuilder::new("r_loop")
        .created()
        .exec_call("fc_loop", "call_loop", json!({"cmd": "echo again"}))
        .completed(Usage::small(), None)
        .build();
    let cwd = tempfile::tempdir().unwrap();
    let mut s = session(
        Script::new([]).with_when_exhausted(always_a_tool_call),
        &["max_sampling_requests_per_turn=3"],
        json!({"approvalPolicy": "never", "cwd": cwd.path().display().to_string()}),
    )
    .await;
    let turn = s.run_turn("loop").await;
    let end = single_turn_end(&turn, "failed");
    let message = end["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("3 sampling requests")
            && message.contains("max_sampling_requests_per_turn"),
        "{message}"
    );
    assert_eq!(end["error"]["codexErrorInfo"], "other");
    let errors = params_of(&turn, "error");
    assert_eq!(errors.len(), 1, "{turn:#?}");
    assert_eq!(errors[0]["willRetry"], false);
    // Exactly three requests went out, and the third call's output is in history.
    let requests = s.provider.wait_for_requests(3, TIMEOUT).await;
    assert_eq!(requests.len(), 3);
    assert_eq!(
        items_of(&turn, "item/completed", "commandExecution").len(),
        3
    );
    let outputs = rollout_response_items(&s.rollout())
        .into_iter()
        .filter(|item| item["type"] == "function_call_output")
        .count();
    assert_eq!(outputs, 3);
}
