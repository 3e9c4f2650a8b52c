//! Automatic compaction through the real binary: a request that would reach
//! `model_auto_compact_token_limit` (the provider's last reported count plus an estimate of what
//! came since, or the estimate of the whole request if larger) is preceded by a compaction —
//! before a turn's first request and between the requests of a turn alike. Requests never pass
//! the limit, not even the summarization request; a model that cannot be summarized small
//! enough fails the turn with an error naming the limit, instead of compacting forever.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// Completes `response` reporting `total` tokens.
fn reply(response: ResponseBuilder, total: u64) -> Reply {
    let usage = Usage {
        input: total - 10,
        output: 10,
        total,
        ..Usage::default()
    };
    response.completed(usage, None).build()
}

/// A response of one assistant message streamed as `pieces`, reporting `total` tokens.
fn message_with_total(response_id: &str, item_id: &str, pieces: &[&str], total: u64) -> Reply {
    reply(
        ResponseBuilder::new(response_id)
            .created()
            .text_message(item_id, pieces),
        total,
    )
}

/// The estimate the daemon makes of a request: four bytes of instructions, tool definitions
/// and input items (as JSON) to a token, rounded up.
fn estimated_tokens(body: &Value) -> usize {
    let instructions = body["instructions"].as_str().map_or(0, str::len);
    let sizes = |key: &str| -> usize {
        body[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|value| value.to_string().len())
            .sum()
    };
    (instructions + sizes("tools") + sizes("input")).div_ceil(4)
}

fn has_tools(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
}

fn user_texts(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == "user")
        .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|piece| piece["text"].as_str().map(str::to_string))
        .collect()
}

fn never_ask() -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access"})
}

const LIMIT: &str = "model_auto_compact_token_limit=20000";

#[tokio::test]
async fn a_turn_whose_first_request_would_pass_the_limit_compacts_first() {
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 1_000_000),
        message_with_total("r1", "m1", &["SUMMARY-BEFORE-TURN"], 500),
        message_with_total("r2", "m2", &["second answer"], 800),
    ]);
    let mut s = session(script, &[LIMIT], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    single_turn_end(&turn, "completed");
    assert_eq!(
        items_of(&turn, "item/completed", "contextCompaction").len(),
        1
    );
    let order: Vec<&str> = turn
        .iter()
        .filter(|m| m["method"] == "item/completed")
        .filter_map(|m| m["params"]["item"]["type"].as_str())
        .collect();
    assert_eq!(order, ["userMessage", "contextCompaction", "agentMessage"]);

    let bodies = s.bodies(3).await;
    assert!(
        !has_tools(&bodies[1]),
        "request 2 is the summarization request"
    );
    let users = user_texts(&bodies[2]);
    assert!(
        users.iter().any(|t| t.contains("SUMMARY-BEFORE-TURN")),
        "{users:?}"
    );
    assert!(users.iter().any(|t| t == "first question"));
    assert!(users.iter().any(|t| t == "second question"));
    assert!(!bodies[2].to_string().contains("first answer"));
}

#[tokio::test]
async fn a_turn_compacts_between_requests_after_a_tool_call_and_goes_on() {
    let script = Script::new([
        reply(
            ResponseBuilder::new("r0").created().exec_call(
                "fc_1",
                "call_1",
                json!({"cmd": "echo tool-ran", "login": false}),
            ),
            1_000_000,
        ),
        message_with_total("r1", "m1", &["SUMMARY-MID-TURN"], 500),
        message_with_total("r2", "m2", &["done"], 800),
    ]);
    let mut s = session(script, &[LIMIT], never_ask()).await;
    let turn = s.run_turn("run the tool").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"][0]["text"], "done");
    let order: Vec<&str> = turn
        .iter()
        .filter(|m| m["method"] == "item/completed")
        .filter_map(|m| m["params"]["item"]["type"].as_str())
        .collect();
    assert_eq!(
        order,
        [
            "userMessage",
            "commandExecution",
            "contextCompaction",
            "agentMessage"
        ]
    );

    let bodies = s.bodies(3).await;
    // The summary was asked for with the tool's output in view...
    assert!(!has_tools(&bodies[1]));
    assert_eq!(call_outputs(&bodies[1]).len(), 1);
    assert!(call_outputs(&bodies[1])[0].1.contains("tool-ran"));
    // ...and the turn's next request carries the summary instead of the call and its output.
    assert!(has_tools(&bodies[2]));
    assert!(call_outputs(&bodies[2]).is_empty());
    let users = user_texts(&bodies[2]);
    assert!(
        users.iter().any(|t| t.contains("SUMMARY-MID-TURN")),
        "{users:?}"
    );
    assert!(users.iter().any(|t| t == "run the tool"));
}

#[tokio::test]
async fn a_long_session_under_a_tight_limit_never_sends_a_request_over_it() {
    const TIGHT: usize = 6_000;
    let answer = format!("answer {}", "words of a long reply ".repeat(90));
    // Every request, summaries included, gets the same long answer.
    let script = Script::new([]).with_when_exhausted(text_reply(0, &answer));
    let limit = format!("model_auto_compact_token_limit={TIGHT}");
    let mut s = session(script, &[&limit], json!({})).await;
    for n in 0..200 {
        let question = format!("question {n}: {}", "please consider this ".repeat(40));
        let turn = s.run_turn(&question).await;
        single_turn_end(&turn, "completed");
    }
    let requests = s.provider.requests();
    assert!(requests.len() > 200);
    let largest = requests
        .iter()
        .map(|request| estimated_tokens(&request.body))
        .max()
        .unwrap_or(0);
    assert!(largest <= TIGHT, "a request of ~{largest} tokens was sent");
    let compactions = s
        .rollout()
        .iter()
        .filter(|line| line["type"] == "compacted")
        .count();
    assert!(compactions >= 20, "{compactions} compactions");
    // The newest question always reaches the model.
    let last = &requests[requests.len() - 1].body;
    assert!(user_texts(last)
        .iter()
        .any(|t| t.starts_with("question 199:")));
}

#[tokio::test]
async fn a_summary_too_large_to_fit_fails_the_turn_and_keeps_the_history() {
    let huge = "an endless summary ".repeat(8_000);
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 1_000_000),
        message_with_total("r1", "m1", &[&huge], 500),
    ]);
    let mut s = session(script, &[LIMIT], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    let end = single_turn_end(&turn, "failed");
    let message = end["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("model_auto_compact_token_limit (20000)"),
        "{message}"
    );
    assert!(s.rollout().iter().all(|line| line["type"] != "compacted"));
}

#[tokio::test]
async fn a_turn_that_keeps_refilling_the_context_stops_after_a_bounded_number_of_compactions() {
    let mut replies = Vec::new();
    for n in 0..8 {
        replies.push(reply(
            ResponseBuilder::new(format!("call{n}"))
                .created()
                .exec_call(
                    &format!("fc_{n}"),
                    &format!("call_{n}"),
                    json!({"cmd": "true"}),
                ),
            1_000_000,
        ));
        replies.push(reply(
            ResponseBuilder::new(format!("sum{n}"))
                .created()
                .text_message(&format!("s{n}"), &["short"]),
            100,
        ));
    }
    replies.push(reply(
        ResponseBuilder::new("call_last").created().exec_call(
            "fc_last",
            "call_last",
            json!({"cmd": "true"}),
        ),
        1_000_000,
    ));
    let mut s = session(Script::new(replies), &[LIMIT], never_ask()).await;
    let turn = s.run_turn("loop").await;
    let end = single_turn_end(&turn, "failed");
    let message = end["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("after 8 compactions"), "{message}");
    assert_eq!(
        items_of(&turn, "item/completed", "contextCompaction").len(),
        8
    );
    assert_eq!(
        s.provider.requests().len(),
        17,
        "no request after the bound"
    );
}

#[tokio::test]
async fn a_request_the_provider_finds_too_long_is_compacted_and_sampled_again() {
    let too_long = ResponseBuilder::new("r_long").created().failed(
        "context_length_exceeded",
        "Your input exceeds the context window of this model.",
    );
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 900),
        too_long.build(),
        message_with_total("r2", "m2", &["SUMMARY-AFTER-REFUSAL"], 500),
        message_with_total("r3", "m3", &["second answer"], 800),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"][0]["text"], "second answer");
    assert_eq!(
        items_of(&turn, "item/completed", "contextCompaction").len(),
        1
    );
    let bodies = s.bodies(4).await;
    assert!(
        !has_tools(&bodies[2]),
        "request 3 is the summarization request"
    );
    let users = user_texts(&bodies[3]);
    assert!(
        users.iter().any(|t| t.contains("SUMMARY-AFTER-REFUSAL")),
        "{users:?}"
    );
    assert!(!bodies[3].to_string().contains("first answer"));
}

#[tokio::test]
async fn an_http_refusal_as_too_long_is_compacted_and_sampled_again_too() {
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 900),
        mock_provider::error_status(
            400,
            "context_length_exceeded",
            "Your input exceeds the context window of this model.",
        ),
        message_with_total("r2", "m2", &["SUMMARY-AFTER-400"], 500),
        message_with_total("r3", "m3", &["second answer"], 800),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(4).await;
    assert!(!has_tools(&bodies[2]));
    assert!(bodies[3].to_string().contains("SUMMARY-AFTER-400"));
}
