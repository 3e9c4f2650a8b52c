//! A response that fails after partial output still reports token usage and rate limits before
//! the failure (PROTOCOL.md §10.3), and a response that fails and then succeeds on retry counts
//! the usage once.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::mock_provider::{failed, ResponseBuilder, SseReply};
use support::*;
use turn_support::*;

/// Created, a message cut short after one delta, then `response.failed` with `code`.
fn failing_reply(id: &str, code: &str) -> Reply {
    let mut events = vec![created(id), message_added(Some("msg_f"), "")];
    events.push(text_delta("msg_f", "Partial"));
    events.extend(failed(id, code, "mock upstream failure"));
    Reply::Sse(SseReply::new(events))
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

#[tokio::test]
async fn a_response_that_fails_then_succeeds_on_retry_counts_usage_once() {
    let retried = ResponseBuilder::new("r_ok")
        .created()
        .text_message("msg_ok", &["Recovered"])
        .completed(support::mock_provider::Usage::example(), None)
        .into_events();
    let mut s = session(
        Script::new([
            failing_reply("r_fail", "server_error"),
            Reply::Sse(SseReply::new(retried)),
        ]),
        &["model_providers.mock.stream_max_retries=2"],
        json!({}),
    )
    .await;
    let turn = s.run_turn("go").await;
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
