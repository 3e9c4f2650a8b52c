//! Editors choose their UI from `codexErrorInfo` (on `error` notifications and on `turn.error`
//! of `turn/completed`), so each provider failure must arrive as the category the reference
//! app-server sends for it, observed against the reference 0.169.0 with a loopback provider:
//!
//! - `response.failed` `rate_limit_exceeded` or `slow_down` is re-sampled, then ends as
//!   `rateLimitExceeded`;
//! - `server_is_overloaded` is not re-sampled and ends as `serverOverloaded`;
//! - HTTP 429 that outlasts the request retries carries `httpStatusCode: 429`, never the
//!   billing category `usageLimitExceeded` (which a 429 with `insufficient_quota` does get);
//! - a rejected key (HTTP 401) carries `httpStatusCode: 401`.
//!
//! The message of a failure the provider reported says what it reported: nothing disconnected.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::mock_provider::{error_status, ResponseBuilder};
use support::*;
use turn_support::*;

/// `response.created`, then `response.failed` with `code`.
fn failing(code: &str, message: &str) -> Reply {
    let events = ResponseBuilder::new("r_fail")
        .created()
        .failed(code, message)
        .into_events();
    Reply::sse(events)
}

/// A 429 whose body carries `code`, asking for no wait.
fn too_many_requests(code: &str) -> Reply {
    let body = json!({"error": {"message": "slow down (mock)", "type": "requests", "code": code}});
    Reply::Status {
        status: 429,
        headers: vec![("retry-after".to_string(), "0".to_string())],
        body: body.to_string(),
    }
}

/// Runs one turn against `replies` (then a reply that would succeed) with `overrides`; returns
/// the turn's messages and how many requests the provider received.
async fn turn_against(replies: Vec<Reply>, overrides: &[&str]) -> (Vec<Value>, usize) {
    let mut script = replies;
    script.push(text_reply(0, "recovered"));
    let mut s = session(Script::new(script), overrides, json!({})).await;
    let turn = s.run_turn("go").await;
    let requests = s.provider.requests().len();
    (turn, requests)
}

/// The `willRetry` flags of the turn's `error` notifications, in order.
fn retry_flags(turn: &[Value]) -> Vec<Value> {
    params_of(turn, "error")
        .iter()
        .map(|e| e["willRetry"].clone())
        .collect()
}

/// The turn failed; its `turn.error` and the last `error` notification carry the same info,
/// which is returned with the message.
fn failure(turn: &[Value]) -> (Value, String) {
    let end = single_turn_end(turn, "failed");
    let errors = params_of(turn, "error");
    let last = errors
        .last()
        .unwrap_or_else(|| panic!("no error notification: {turn:#?}"));
    assert_eq!(last["willRetry"], false);
    assert_eq!(
        last["error"], end["error"],
        "notification and turn.error agree"
    );
    let message = end["error"]["message"].as_str().unwrap_or("").to_string();
    (end["error"]["codexErrorInfo"].clone(), message)
}

#[tokio::test]
async fn a_rate_limited_response_is_resampled_then_ends_as_rate_limit_exceeded() {
    for code in ["rate_limit_exceeded", "slow_down"] {
        let replies = vec![
            failing(code, "Rate limit reached. Please try again in 1ms."),
            failing(code, "Rate limit reached. Please try again in 1ms."),
        ];
        let (turn, requests) =
            turn_against(replies, &["model_providers.mock.stream_max_retries=1"]).await;
        assert_eq!(requests, 2, "{code}: re-sampled once");
        assert_eq!(
            retry_flags(&turn),
            vec![json!(true), json!(false)],
            "{code}"
        );
        let (info, message) = failure(&turn);
        assert_eq!(info, json!("rateLimitExceeded"), "{code}");
        assert!(
            message.starts_with("rate limit exceeded: Rate limit reached"),
            "{code}: {message}"
        );
    }
}

#[tokio::test]
async fn an_overloaded_server_is_not_resampled_and_ends_as_server_overloaded() {
    let replies = vec![failing("server_is_overloaded", "Model at capacity")];
    let (turn, requests) =
        turn_against(replies, &["model_providers.mock.stream_max_retries=3"]).await;
    assert_eq!(
        requests, 1,
        "asking an overloaded model again at once does not help"
    );
    assert_eq!(retry_flags(&turn), vec![json!(false)]);
    let (info, message) = failure(&turn);
    assert_eq!(info, json!("serverOverloaded"));
    assert!(message.contains("Model at capacity"), "{message}");
}

#[tokio::test]
async fn any_other_provider_failure_says_what_the_provider_reported() {
    let replies = vec![failing("server_error", "The upstream model crashed")];
    let (turn, _) = turn_against(replies, &[]).await;
    let (info, message) = failure(&turn);
    assert_eq!(info, json!("other"));
    assert!(!message.starts_with("stream disconnected"), "{message}");
    assert!(message.contains("The upstream model crashed"), "{message}");
}

#[tokio::test]
async fn http_429_after_the_retries_carries_its_status_not_a_billing_category() {
    let replies = vec![
        too_many_requests("rate_limit_exceeded"),
        too_many_requests("rate_limit_exceeded"),
    ];
    let (turn, requests) =
        turn_against(replies, &["model_providers.mock.request_max_retries=1"]).await;
    assert_eq!(requests, 2, "one retry before the stream");
    let (info, message) = failure(&turn);
    assert_eq!(
        info,
        json!({"responseTooManyFailedAttempts": {"httpStatusCode": 429}})
    );
    assert!(message.contains("429"), "{message}");
}

#[tokio::test]
async fn http_429_for_a_spent_quota_is_a_usage_limit_and_is_not_retried() {
    let replies = vec![too_many_requests("insufficient_quota")];
    let (turn, requests) =
        turn_against(replies, &["model_providers.mock.request_max_retries=3"]).await;
    assert_eq!(requests, 1, "waiting does not refill a quota");
    let (info, _) = failure(&turn);
    assert_eq!(info, json!("usageLimitExceeded"));
}

#[tokio::test]
async fn a_rejected_key_carries_http_401() {
    // The first 401 triggers one recovery (the key is read again), the second ends the turn.
    let replies = vec![
        error_status(401, "invalid_api_key", "Incorrect API key provided"),
        error_status(401, "invalid_api_key", "Incorrect API key provided"),
    ];
    let (turn, requests) = turn_against(replies, &[]).await;
    assert_eq!(requests, 2);
    let (info, message) = failure(&turn);
    assert_eq!(
        info,
        json!({"httpConnectionFailed": {"httpStatusCode": 401}})
    );
    assert!(message.contains("401"), "{message}");
    assert!(!message.contains("sk-test-secret-key"), "{message}");
}
