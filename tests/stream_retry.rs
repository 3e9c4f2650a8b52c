//! A retryable stream error mid-response re-samples from the current history (docs/ARCHITECTURE.md
//! §6): items committed before the cut stay committed exactly once — in live history,
//! in the rollout and in notifications — the retry is announced by `error` with
//! `willRetry: true`, and when retries run out the turn fails with the cause.
//!
//! The provider cuts the connection (`Fault::Cut`) at several byte offsets of a transcript with
//! reasoning, a commentary message and a tool call; what the test expects the retry to produce
//! follows from which events were whole before the cut, as a real model would continue.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::collections::HashMap;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The items of the first response, in order; `suffix` renames them for the retry, as a real
/// provider gives fresh ids to what it generates again.
fn item_events(suffix: &str) -> Vec<Item> {
    let rs = format!("rs_1{suffix}");
    let reasoning = move |b: ResponseBuilder| {
        let part = |kind: &str| json!({"type": kind, "item_id": rs, "summary_index": 0});
        let mut added = part("response.reasoning_summary_part.added");
        added["part"] = json!({"type": "summary_text", "text": ""});
        let delta = |text: &str| {
            let mut delta = part("response.reasoning_summary_text.delta");
            delta["delta"] = json!(text);
            delta
        };
        b.output_item_added(json!({"type": "reasoning", "id": rs, "summary": []}))
            .event(added)
            .event(delta("**Plan** "))
            .event(delta("look first"))
            .output_item_done(json!({"type": "reasoning", "id": rs,
                "summary": [{"type": "summary_text", "text": "**Plan** look first"}],
                "encrypted_content": "enc"}))
    };
    let message_id = format!("msg_1{suffix}");
    let commentary =
        move |b: ResponseBuilder| b.text_message(&message_id, &["Running ", "a command ", "now."]);
    let (item_id, call_id) = (format!("fc_1{suffix}"), format!("call_1{suffix}"));
    let call = move |b: ResponseBuilder| {
        b.exec_call(
            &item_id,
            &call_id,
            json!({"cmd": "echo hi", "login": false}),
        )
    };
    vec![Box::new(reasoning), Box::new(commentary), Box::new(call)]
}

/// Adds one item's events to a response.
type Item = Box<dyn FnOnce(ResponseBuilder) -> ResponseBuilder>;

/// Bytes of one event as the mock writes it.
fn sse_len(event: &SseEvent) -> usize {
    let name = event.event_name().map(|name| 8 + name.len()).unwrap_or(0);
    let data: usize = event.data.split('\n').map(|line| 7 + line.len()).sum();
    name + data + 1
}

struct CutCase {
    offset: usize,
    /// Which of the three items were done before the cut.
    committed: [bool; 3],
}

/// Cut points: inside and right after several events, never past the end of the body.
fn cut_cases() -> (Vec<SseEvent>, Vec<CutCase>) {
    let items = item_events("");
    let mut response = ResponseBuilder::new("r1").created();
    let mut done_at = Vec::new();
    for item in items {
        response = item(response);
        done_at.push(response.clone().into_events().len() - 1);
    }
    let events = response.completed(Usage::small(), None).into_events();
    let mut ends = Vec::new();
    let mut total = 0;
    for event in &events {
        total += sse_len(event);
        ends.push(total);
    }
    // created (mid), reasoning delta (mid), reasoning done (end), message delta (mid), message
    // done (end), call arguments (mid), call done (end), completed (mid).
    let points = [
        (0, true),
        (3, true),
        (5, false),
        (7, true),
        (10, false),
        (12, true),
        (13, false),
        (14, true),
    ];
    let cases = points
        .iter()
        .map(|&(index, mid)| {
            let offset = if mid { ends[index] - 5 } else { ends[index] };
            let committed = [0, 1, 2].map(|item| ends[done_at[item]] <= offset);
            CutCase { offset, committed }
        })
        .collect();
    (events, cases)
}

/// The replies after the cut: the retry continues with what was not committed; if that includes
/// the tool call, a third reply answers after the tool.
fn retry_replies(committed: [bool; 3]) -> Vec<Reply> {
    let final_message = || message_reply("r_final", "msg_final", &["All done."]);
    if committed[2] {
        return vec![final_message()];
    }
    let remaining = item_events("b")
        .into_iter()
        .zip(committed)
        .filter(|(_, done)| !done)
        .fold(
            ResponseBuilder::new("r_retry").created(),
            |response, (item, _)| item(response),
        );
    vec![
        remaining.completed(Usage::small(), None).build(),
        final_message(),
    ]
}

fn count_ids<'a>(values: impl Iterator<Item = &'a Value>) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for value in values {
        if let Some(id) = value["id"].as_str() {
            *counts.entry(id.to_string()).or_insert(0) += 1;
        }
    }
    counts
}

fn assert_unique(counts: &HashMap<String, usize>, what: &str, offset: usize) {
    for (id, count) in counts {
        assert_eq!(
            *count, 1,
            "{what}: {id} appears {count} times (cut at {offset})"
        );
    }
}

#[tokio::test]
async fn a_provider_cut_mid_response_then_a_successful_retry_duplicates_nothing() {
    let (events, cases) = cut_cases();
    for case in cases {
        let cut = SseReply::new(events.clone()).with_fault(case.offset, Fault::Cut);
        let mut replies = vec![Reply::Sse(cut)];
        replies.extend(retry_replies(case.committed));
        let workdir = tempfile::tempdir().unwrap();
        let params =
            json!({"approvalPolicy": "never", "cwd": workdir.path().display().to_string()});
        let mut s = session(
            Script::new(replies),
            &["model_providers.mock.stream_max_retries=2"],
            params,
        )
        .await;
        let turn = s.run_turn("go").await;
        let offset = case.offset;
        let end = single_turn_end(&turn, "completed");
        assert_eq!(end["items"][0]["text"], "All done.", "cut at {offset}");
        let errors = params_of(&turn, "error");
        assert_eq!(errors.len(), 1, "cut at {offset}: {turn:#?}");
        assert_eq!(errors[0]["willRetry"], true);

        let completed: Vec<&Value> = params_of(&turn, "item/completed")
            .iter()
            .map(|p| &p["item"])
            .collect();
        assert_unique(
            &count_ids(completed.iter().copied()),
            "item/completed",
            offset,
        );
        let started: Vec<&Value> = params_of(&turn, "item/started")
            .iter()
            .map(|p| &p["item"])
            .collect();
        assert_unique(&count_ids(started.iter().copied()), "item/started", offset);
        // Exactly one tool ran, whichever response its call came from.
        assert_eq!(
            items_of(&turn, "item/completed", "commandExecution").len(),
            1,
            "cut at {offset}"
        );

        let bodies = s.bodies(1).await;
        let last_input = bodies
            .last()
            .map(|b| b["input"].clone())
            .unwrap_or_default();
        let input = last_input.as_array().cloned().unwrap_or_default();
        assert_unique(&count_ids(input.iter()), "history", offset);
        let calls = input
            .iter()
            .filter(|i| i["type"] == "function_call")
            .count();
        assert_eq!(calls, 1, "cut at {offset}: {input:#?}");
        assert_eq!(
            call_outputs(&Value::Object(
                [("input".to_string(), Value::Array(input.clone()))]
                    .into_iter()
                    .collect()
            ))
            .len(),
            1
        );

        let lines = s.rollout();
        assert_unique(
            &count_ids(rollout_turn_items(&lines).iter()),
            "rollout turn items",
            offset,
        );
        assert_unique(
            &count_ids(rollout_response_items(&lines).iter()),
            "rollout history",
            offset,
        );
    }
}

#[tokio::test]
async fn when_stream_retries_run_out_the_turn_fails_with_the_cause() {
    let (events, cases) = cut_cases();
    let offset = cases[1].offset;
    let cut = || Reply::Sse(SseReply::new(events.clone()).with_fault(offset, Fault::Cut));
    let mut s = session(
        Script::new([cut(), cut()]),
        &["model_providers.mock.stream_max_retries=1"],
        json!({}),
    )
    .await;
    let turn = s.run_turn("go").await;
    let end = single_turn_end(&turn, "failed");
    let errors = params_of(&turn, "error");
    assert_eq!(
        errors
            .iter()
            .map(|e| e["willRetry"].clone())
            .collect::<Vec<_>>(),
        vec![json!(true), json!(false)]
    );
    assert!(end["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    assert_eq!(s.bodies(2).await.len(), 2);
}
