//! When compaction fails, through the real binary: an automatic compaction that fails is never
//! the reason a turn fails — its `contextCompaction` item completes `failed` with the reason, a
//! `warning` says so, and the turn sends its request with the history as it was (the provider
//! decides whether it fits). Only a provider's refusal as too long that compaction cannot answer
//! ends the turn: `contextWindowExceeded`, with a message about the context, not about the
//! request that found it out.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

const LIMIT: &str = "model_auto_compact_token_limit=20000";

/// A streamed refusal of the request as too long for the model's context.
fn refused_in_the_stream(response_id: &str) -> Reply {
    ResponseBuilder::new(response_id)
        .created()
        .failed(
            "context_length_exceeded",
            "PROVIDER-REFUSAL: your input exceeds the context window of this model.",
        )
        .build()
}

/// The same refusal as an HTTP error, before any stream.
fn refused_over_http() -> Reply {
    mock_provider::error_status(
        400,
        "context_length_exceeded",
        "SUMMARIZATION-REFUSED: your input exceeds the context window of this model.",
    )
}

fn turn_error(end: &Value) -> (&str, &Value) {
    (
        end["error"]["message"].as_str().unwrap_or_default(),
        &end["error"]["codexErrorInfo"],
    )
}

#[tokio::test]
async fn a_failed_automatic_compaction_completes_its_item_failed_and_the_turn_still_sends() {
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 1_000_000),
        mock_provider::error_status(500, "server_error", "SUMMARIES-ARE-DOWN today"),
        message_with_total("r2", "m2", &["second answer"], 1_000_000),
    ]);
    let mut s = session(script, &[LIMIT], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"][0]["text"], "second answer");

    let started = items_of(&turn, "item/started", "contextCompaction");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["status"], "inProgress");
    let completed = items_of(&turn, "item/completed", "contextCompaction");
    assert_eq!(completed.len(), 1, "{turn:#?}");
    assert_eq!(completed[0]["id"], started[0]["id"]);
    assert_eq!(completed[0]["status"], "failed");
    let reason = completed[0]["error"].as_str().unwrap_or_default();
    assert!(reason.contains("SUMMARIES-ARE-DOWN"), "{reason}");
    let warnings = params_of(&turn, "warning");
    assert!(
        warnings.iter().any(|w| w["message"]
            .as_str()
            .is_some_and(|m| m.contains("automatic compaction failed"))),
        "{warnings:?}"
    );

    // The request went out with the whole history, and nothing was recorded as compacted.
    let bodies = s.bodies(3).await;
    assert!(has_tools(&bodies[2]));
    assert!(bodies[2].to_string().contains("first answer"));
    assert!(s.rollout().iter().all(|line| line["type"] != "compacted"));
    // thread/read shows the failed item in its turn.
    let read = s
        .daemon
        .ok(
            "thread/read",
            json!({"threadId": s.thread_id, "includeTurns": true}),
        )
        .await;
    let stored: Vec<Value> = read["thread"]["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|turn| turn["items"].as_array().cloned().unwrap_or_default())
        .filter(|item| item["type"] == "contextCompaction")
        .collect();
    assert_eq!(stored.len(), 1, "{read}");
    assert_eq!(stored[0]["status"], "failed");
}

#[tokio::test]
async fn a_refusal_right_after_a_compaction_fails_the_turn_as_context_window_exceeded() {
    let script = Script::new([
        message_with_total("r0", "m0", &["first answer"], 900),
        refused_in_the_stream("r1"),
        message_with_total("r2", "m2", &["SUMMARY"], 500),
        refused_in_the_stream("r3"),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    let end = single_turn_end(&turn, "failed");
    let (message, info) = turn_error(end);
    assert_eq!(info, "contextWindowExceeded");
    assert!(message.contains("context window"), "{message}");
    assert!(
        message.contains("even after the history was compacted"),
        "{message}"
    );
    let completed = items_of(&turn, "item/completed", "contextCompaction");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["status"], "completed");
    // Compacting again could not help: no request after the second refusal.
    s.bodies(4).await;
    assert_eq!(s.provider.requests().len(), 4);
}

#[tokio::test]
async fn a_refusal_whose_compaction_is_refused_too_fails_with_a_message_about_the_context() {
    // The summarization request is refused as too long as well, each time with less history.
    let mut replies = vec![
        message_with_total("r0", "m0", &["first answer"], 900),
        refused_in_the_stream("r1"),
    ];
    replies.extend((0..5).map(|_| refused_over_http()));
    let mut s = session(Script::new(replies), &[], json!({})).await;
    s.run_turn("first question").await;
    let turn = s.run_turn("second question").await;
    let end = single_turn_end(&turn, "failed");
    let (message, info) = turn_error(end);
    assert_eq!(info, "contextWindowExceeded");
    assert!(message.contains("context window"), "{message}");
    assert!(
        !message.contains("SUMMARIZATION-REFUSED") && !message.starts_with("compaction failed"),
        "the turn's message is about the context, not the summarization request: {message}"
    );
    let details = end["error"]["additionalDetails"]
        .as_str()
        .unwrap_or_default();
    assert!(details.contains("SUMMARIZATION-REFUSED"), "{details}");
    let completed = items_of(&turn, "item/completed", "contextCompaction");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["status"], "failed");
    // One summarization request, then four with less and less of the history.
    s.bodies(7).await;
    assert_eq!(s.provider.requests().len(), 7);
    assert!(s.rollout().iter().all(|line| line["type"] != "compacted"));
}
