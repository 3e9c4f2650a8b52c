//! Automatic compaction through the real binary, decided the way the reference decides it: on
//! the `total_tokens` the provider reported for the thread's last request (plus an estimate of
//! what the history gained after the model's last output), before the next request — a turn's
//! first one and its follow-ups after tool calls alike. Nothing is reported before a thread's
//! first response, so a first turn never compacts, however large its request; a compacted
//! history that is still over the limit is sent anyway (the provider decides); a turn that keeps
//! refilling the context compacts a bounded number of times, then sends its requests as they
//! are. A resumed thread decides on the count its rollout recorded.
//!
//! Every command a script runs is `login: false`: a login shell reads the machine's profile,
//! which may take any time (here it runs `pyenv rehash`, which waits on a lock other tests'
//! shells hold), and no test here is about profiles.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

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

fn never_ask() -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access"})
}

/// A response that runs `true` (no login shell) and reports `total` tokens.
fn tool_call_with_total(response_id: &str, call: &str, total: u64) -> Reply {
    completed_with_total(
        ResponseBuilder::new(response_id).created().exec_call(
            &format!("fc_{call}"),
            call,
            json!({"cmd": "true", "login": false}),
        ),
        total,
    )
}

fn item_types<'a>(messages: &'a [Value], method: &str) -> Vec<&'a str> {
    messages
        .iter()
        .filter(|m| m["method"] == method)
        .filter_map(|m| m["params"]["item"]["type"].as_str())
        .collect()
}

const LIMIT: &str = "model_auto_compact_token_limit=20000";

#[tokio::test]
async fn a_limit_smaller_than_the_instructions_does_not_compact_the_first_turn_nor_fail_any() {
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 3_000),
        message_with_total("r1", "m1", &["SUMMARY-SMALL-WINDOW"], 2_900),
        message_with_total("r2", "m2", &["second answer"], 3_000),
    ]);
    let mut s = session(script, &["model_auto_compact_token_limit=1000"], json!({})).await;
    let first = s.run_turn("first question").await;
    single_turn_end(&first, "completed");
    assert!(
        items_of(&first, "item/started", "contextCompaction").is_empty(),
        "nothing was reported yet: the first turn does not compact"
    );
    let bodies = s.bodies(1).await;
    assert!(has_tools(&bodies[0]));
    assert!(
        estimated_tokens(&bodies[0]) > 1000,
        "the request alone is over the limit"
    );

    // The provider reported 3,000: the next turn compacts first. The compacted history is still
    // over 1,000 (the instructions alone are), and the request goes out all the same.
    let second = s.run_turn("second question").await;
    let end = single_turn_end(&second, "completed");
    assert_eq!(end["items"][0]["text"], "second answer");
    let compactions = items_of(&second, "item/completed", "contextCompaction");
    assert_eq!(compactions.len(), 1, "{second:#?}");
    assert_eq!(compactions[0]["status"], "completed");
    assert!(compactions[0]["error"].is_null());
    let bodies = s.bodies(3).await;
    assert!(
        !has_tools(&bodies[1]),
        "request 2 is the summarization request"
    );
    let users = user_texts(&bodies[2]);
    assert!(
        users.iter().any(|t| t.contains("SUMMARY-SMALL-WINDOW")),
        "{users:?}"
    );
    assert!(estimated_tokens(&bodies[2]) > 1000);
    assert_eq!(s.provider.requests().len(), 3);
}

#[tokio::test]
async fn a_response_reporting_more_than_the_limit_makes_the_next_turn_compact_first() {
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
        item_types(&turn, "item/completed"),
        ["userMessage", "contextCompaction", "agentMessage"]
    );

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
        completed_with_total(
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
    assert_eq!(
        item_types(&turn, "item/completed"),
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
async fn a_long_session_against_a_provider_counting_its_requests_stays_under_the_limit() {
    const TIGHT: usize = 20_000;
    let answer = format!("answer {}", "words of a long reply ".repeat(90));
    // Every request, summaries included, gets the same long answer, and the provider counts
    // each request's own size as its usage, as a real one does.
    let reply =
        mock_provider::simple_text_response("r", "m", &answer, 2).with_usage_counted_from_request();
    let script = Script::new([]).with_when_exhausted(Reply::Sse(reply));
    let limit = format!("model_auto_compact_token_limit={TIGHT}");
    let mut s = session(script, &[&limit], json!({})).await;
    for n in 0..150 {
        let question = format!("question {n}: {}", "please consider this ".repeat(40));
        let turn = s.run_turn(&question).await;
        single_turn_end(&turn, "completed");
    }
    let requests = s.provider.requests();
    assert!(requests.len() > 150);
    // A turn's requests stay under the limit: each one that would have reached it was
    // preceded by a compaction, decided on the count of the request before it.
    let largest = requests
        .iter()
        .filter(|request| has_tools(&request.body))
        .map(|request| estimated_tokens(&request.body))
        .max()
        .unwrap_or(0);
    assert!(largest <= TIGHT, "a request of ~{largest} tokens was sent");
    let compactions = s
        .rollout()
        .iter()
        .filter(|line| line["type"] == "compacted")
        .count();
    // Compacting when the count says so, not every turn: about one turn in twenty here.
    assert!((5..=30).contains(&compactions), "{compactions} compactions");
    // The newest question always reaches the model.
    let last = &requests[requests.len() - 1].body;
    assert!(user_texts(last)
        .iter()
        .any(|t| t.starts_with("question 149:")));
}

#[tokio::test]
async fn a_summary_too_large_for_the_limit_still_replaces_the_history_and_the_turn_goes_on() {
    let huge = "an endless summary ".repeat(8_000);
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 1_000_000),
        message_with_total("r1", "m1", &[&huge], 500),
        message_with_total("r2", "m2", &["second answer"], 40_000),
    ]);
    let mut s = session(script, &[LIMIT], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    single_turn_end(&turn, "completed");
    let compactions = items_of(&turn, "item/completed", "contextCompaction");
    assert_eq!(compactions[0]["status"], "completed");
    let compacted: Vec<Value> = s
        .rollout()
        .into_iter()
        .filter(|line| line["type"] == "compacted")
        .collect();
    assert_eq!(compacted.len(), 1);
    let bodies = s.bodies(3).await;
    assert!(estimated_tokens(&bodies[2]) > 20_000);
    assert!(!bodies[2].to_string().contains("first answer"));
}

#[tokio::test]
async fn a_turn_that_keeps_refilling_the_context_compacts_a_bounded_number_of_times_then_goes_on() {
    let mut replies = Vec::new();
    for n in 0..8 {
        replies.push(tool_call_with_total(
            &format!("call{n}"),
            &format!("call_{n}"),
            1_000_000,
        ));
        replies.push(message_with_total(
            &format!("sum{n}"),
            &format!("s{n}"),
            &["short"],
            100,
        ));
    }
    replies.push(tool_call_with_total("call_last", "call_last", 1_000_000));
    replies.push(message_with_total("r_done", "m_done", &["done"], 1_000_000));
    let mut s = session(Script::new(replies), &[LIMIT], never_ask()).await;
    let turn = s.run_turn("loop").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"][0]["text"], "done");
    assert_eq!(
        items_of(&turn, "item/completed", "contextCompaction").len(),
        8
    );
    let warnings = params_of(&turn, "warning");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let message = warnings[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("compacted its history 8 times"),
        "{message}"
    );
    // Past the bound the request goes out as it is: the last call and its output in it.
    let bodies = s.bodies(18).await;
    assert_eq!(bodies.len(), 18, "no request after the model stopped");
    assert!(has_tools(&bodies[17]));
    let outputs = call_outputs(&bodies[17]);
    assert!(
        outputs.iter().any(|(call, _)| call == "call_last"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn a_resumed_thread_compacts_on_the_count_its_last_response_reported() {
    let home = tempfile::tempdir().unwrap();
    let first_provider = MockProvider::start(Script::new([message_with_total(
        "r0",
        "m0",
        &["first answer"],
        1_000_000,
    )]))
    .await
    .unwrap();
    let overrides = |provider: &MockProvider| {
        let mut overrides = mock_overrides(provider);
        overrides.push(LIMIT.to_string());
        overrides
    };
    let mut first = Daemon::spawn(home.path(), &overrides(&first_provider));
    first.initialize().await;
    let id = first.start_thread(json!({})).await;
    text_turn(&mut first, &id, "first question").await;
    first.close_stdin();
    assert_eq!(first.wait_exit().await, Some(0));

    let second_provider = MockProvider::start(Script::new([
        message_with_total("r1", "m1", &["SUMMARY-AFTER-RESUME"], 500),
        message_with_total("r2", "m2", &["second answer"], 800),
    ]))
    .await
    .unwrap();
    let mut second = Daemon::spawn(home.path(), &overrides(&second_provider));
    second.initialize().await;
    second.ok("thread/resume", json!({"threadId": id})).await;
    let turn = text_turn(&mut second, &id, "second question").await;
    single_turn_end(&turn, "completed");
    assert_eq!(
        items_of(&turn, "item/completed", "contextCompaction").len(),
        1
    );
    let requests = second_provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(!has_tools(&requests[0].body));
    assert!(user_texts(&requests[1].body)
        .iter()
        .any(|t| t.contains("SUMMARY-AFTER-RESUME")));
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
