//! A response that fails after partial output still reports token usage and rate limits before
//! the failure (docs/PROTOCOL.md §9), and a response that fails and then succeeds on retry counts
//! the usage once. The usage a failed response reports itself (`response.failed` may carry
//! `usage`) is added to the thread's total: those tokens were consumed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// Created, a message cut short after one delta, then `response.failed` with `code`.
fn failing_reply(id: &str, code: &str) -> Reply {
    ResponseBuilder::new(id)
        .created()
        .message_added(Some("msg_f"), "")
        .text_delta("msg_f", "Partial")
        .failed(code, "mock upstream failure")
        .build()
}

fn position(messages: &[Value], method: &str) -> usize {
    messages
        .iter()
        .position(|m| m["method"] == method)
        .unwrap_or_else(|| panic!("no {method} in {:?}", methods(messages)))
}

fn total_tokens(messages: &[Value]) -> Vec<Value> {
    params_of(messages, "thread/tokenUsage/updated")
        .iter()
        .map(|p| p["tokenUsage"]["total"]["totalTokens"].clone())
        .collect()
}

#[tokio::test]
async fn a_failed_response_reports_usage_and_rate_limits_before_the_failure() {
    let mut s = session(
        Script::new([
            text_reply(0, "fine"),
            failing_reply("r_fail", "invalid_prompt"),
        ]),
        &[],
        json!({}),
    )
    .await;
    let ok = s.run_turn("first").await;
    assert_eq!(total_tokens(&ok), vec![json!(130)]);
    let turn = s.run_turn("second").await;
    single_turn_end(&turn, "failed");
    let usage = position(&turn, "thread/tokenUsage/updated");
    let limits = position(&turn, "account/rateLimits/updated");
    let error = position(&turn, "error");
    let end = position(&turn, "turn/completed");
    assert!(
        usage < limits && limits < error && error < end,
        "{:?}",
        methods(&turn)
    );
    // The failed response adds nothing to the thread's total.
    assert_eq!(total_tokens(&turn), vec![json!(130)]);
    let last = &params_of(&turn, "thread/tokenUsage/updated")[0]["tokenUsage"]["last"];
    assert_eq!(last["totalTokens"], 0);
}

/// One turn whose first response is `failure` and whose retry completes with the example usage.
async fn fail_then_recover(failure: Reply) -> (Session, Vec<Value>) {
    let retried = ResponseBuilder::new("r_ok")
        .created()
        .text_message("msg_ok", &["Recovered"])
        .completed(Usage::example(), None)
        .build();
    let mut s = session(
        Script::new([failure, retried]),
        &["model_providers.mock.stream_max_retries=2"],
        json!({}),
    )
    .await;
    let turn = s.run_turn("go").await;
    (s, turn)
}

#[tokio::test]
async fn a_response_that_fails_then_succeeds_on_retry_counts_usage_once() {
    let (s, turn) = fail_then_recover(failing_reply("r_fail", "server_error")).await;
    single_turn_end(&turn, "completed");
    let retries: Vec<Value> = params_of(&turn, "error")
        .iter()
        .map(|e| e["willRetry"].clone())
        .collect();
    assert_eq!(retries, vec![json!(true)]);
    assert_eq!(total_tokens(&turn), vec![json!(130)]);
    let usage = params_of(&turn, "thread/tokenUsage/updated");
    assert_eq!(usage[0]["tokenUsage"]["last"]["totalTokens"], 130);
    assert_eq!(s.bodies(2).await.len(), 2);
}

/// Like [`failing_reply`], but the failure reports the usage of 40 input + 10 output tokens.
fn failing_reply_with_usage(id: &str, code: &str) -> Reply {
    ResponseBuilder::new(id)
        .created()
        .message_added(Some("msg_f"), "")
        .text_delta("msg_f", "Partial")
        .failed_with_usage(
            code,
            "mock upstream failure",
            Usage {
                input: 40,
                cached: 4,
                output: 10,
                reasoning: 2,
                total: 50,
            },
        )
        .build()
}

#[tokio::test]
async fn a_failed_responses_own_usage_is_added_to_the_threads_total() {
    let mut s = session(
        Script::new([
            text_reply(0, "fine"),
            failing_reply_with_usage("r_fail", "invalid_prompt"),
        ]),
        &[],
        json!({}),
    )
    .await;
    s.run_turn("first").await;
    let turn = s.run_turn("second").await;
    single_turn_end(&turn, "failed");
    assert_eq!(total_tokens(&turn), vec![json!(180)]);
    let usage = &params_of(&turn, "thread/tokenUsage/updated")[0]["tokenUsage"];
    assert_eq!(
        usage["last"],
        json!({"totalTokens": 50, "inputTokens": 40, "cachedInputTokens": 4, "cacheWriteInputTokens": 0,
            "outputTokens": 10, "reasoningOutputTokens": 2})
    );
    assert!(position(&turn, "thread/tokenUsage/updated") < position(&turn, "error"));
    // Persisted, so a resumed thread counts on from the same total.
    let stored: Vec<Value> = s
        .rollout()
        .iter()
        .filter(|line| line["type"] == "token_usage")
        .map(|line| line["payload"]["total"]["total_tokens"].clone())
        .collect();
    assert_eq!(stored, vec![json!(130), json!(180)]);
}

#[tokio::test]
async fn a_retried_failure_that_reported_usage_is_counted_before_the_retry() {
    let (_s, turn) = fail_then_recover(failing_reply_with_usage("r_fail", "server_error")).await;
    single_turn_end(&turn, "completed");
    assert_eq!(total_tokens(&turn), vec![json!(50), json!(180)]);
    let usage = position(&turn, "thread/tokenUsage/updated");
    let retry_notice = position(&turn, "error");
    assert!(usage < retry_notice, "{:?}", methods(&turn));
    assert_eq!(params_of(&turn, "error")[0]["willRetry"], true);
}
