//! Manual compaction (`thread/compact/start`) through the real binary: it runs as a turn of its
//! own whose one item is `contextCompaction`; the summarization request goes to the thread's
//! provider without tools; the next request carries the user's messages and the summary instead
//! of the whole conversation, and is shorter; `thread/read` shows the item in its turn; a resume
//! after a restart sends exactly the compacted history; a failed or interrupted compaction
//! leaves the history (and the rollout) as they were and still completes its item, `failed`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// A long assistant answer, so dropping answers visibly shortens a request.
fn long_answer(n: usize) -> String {
    format!("answer {n}: {}", "lorem ipsum dolor sit amet ".repeat(200))
}

const SUMMARY: &str = "SUMMARY: the user asked two questions; both were answered.";

fn texts_of(input: &[Value], role: &str) -> Vec<String> {
    input
        .iter()
        .filter(|item| item["type"] == "message" && item["role"] == role)
        .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|piece| piece["text"].as_str().map(str::to_string))
        .collect()
}

async fn compact(daemon: &mut Daemon, thread_id: &str) -> Vec<Value> {
    let response = daemon
        .ok("thread/compact/start", json!({"threadId": thread_id}))
        .await;
    assert_eq!(response, json!({}));
    daemon.until_turn_completed().await
}

#[tokio::test]
async fn manual_compaction_is_a_turn_and_the_next_request_carries_the_summary_and_is_shorter() {
    let script = Script::new([
        text_reply(0, &long_answer(0)),
        text_reply(1, &long_answer(1)),
        text_reply(2, SUMMARY),
        text_reply(3, "after"),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    s.run_turn("second question").await;
    let compaction = compact(&mut s.daemon, &s.thread_id.clone()).await;

    // The compaction turn: started, one contextCompaction item, completed.
    let kinds: Vec<String> = compaction
        .iter()
        .filter_map(|m| match m["method"].as_str() {
            Some(method @ ("item/started" | "item/completed")) => Some(format!(
                "{method}:{}",
                m["params"]["item"]["type"].as_str().unwrap_or("")
            )),
            Some(method @ ("turn/started" | "turn/completed")) => Some(method.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "turn/started",
            "item/started:contextCompaction",
            "item/completed:contextCompaction",
            "turn/completed"
        ]
    );
    // Usage: the summarization request counts in the total; `last` then reports the size of
    // the compacted request, which holds no input tokens billed yet.
    let usage = params_of(&compaction, "thread/tokenUsage/updated");
    assert_eq!(usage.len(), 2, "{usage:?}");
    let after = &usage[1]["tokenUsage"];
    assert_eq!(after["total"], usage[0]["tokenUsage"]["total"]);
    assert_eq!(after["last"]["inputTokens"], 0);
    let estimated = after["last"]["totalTokens"].as_i64().unwrap_or_default();
    assert!(estimated > 0, "{after}");
    let end = single_turn_end(&compaction, "completed");
    let compaction_turn_id = end["id"].as_str().unwrap_or_default().to_string();

    s.run_turn("third question").await;
    let bodies = s.bodies(4).await;
    // The summarization request: the whole conversation, then a request for a summary, no tools.
    let summarize = &bodies[2];
    assert_eq!(summarize["tools"], json!([]));
    let input = summarize["input"].as_array().cloned().unwrap_or_default();
    let assistant = texts_of(&input, "assistant");
    assert_eq!(assistant, [long_answer(0), long_answer(1)]);
    let users = texts_of(&input, "user");
    let ask = users.last().cloned().unwrap_or_default();
    assert!(ask.to_lowercase().contains("summary"), "{ask}");

    // The next turn's request: the user's messages and the summary, no assistant answers.
    let next = &bodies[3];
    let input = next["input"].as_array().cloned().unwrap_or_default();
    assert!(texts_of(&input, "assistant").is_empty(), "{input:?}");
    let users = texts_of(&input, "user");
    let position = |needle: &str| users.iter().position(|text| text.contains(needle));
    let (first, second, summary, third) = (
        position("first question"),
        position("second question"),
        position(SUMMARY),
        position("third question"),
    );
    assert!(first.is_some() && second.is_some() && summary.is_some() && third.is_some());
    assert!(
        first < second && second < summary && summary < third,
        "{users:?}"
    );
    assert!(
        next.to_string().len() < bodies[1].to_string().len(),
        "the request after compaction is shorter than the one before it"
    );

    // thread/read shows the item in its own turn, and the rollout recorded the compaction.
    let read = s
        .daemon
        .ok(
            "thread/read",
            json!({"threadId": s.thread_id, "includeTurns": true}),
        )
        .await;
    let turns = read["thread"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let compaction_turn = turns
        .iter()
        .find(|turn| turn["id"] == compaction_turn_id.as_str())
        .unwrap_or_else(|| panic!("no compaction turn in {turns:?}"));
    assert_eq!(compaction_turn["status"], "completed");
    let items: Vec<&str> = compaction_turn["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["type"].as_str())
        .collect();
    assert_eq!(items, ["contextCompaction"]);
    let compacted: Vec<Value> = s
        .rollout()
        .into_iter()
        .filter(|line| line["type"] == "compacted")
        .collect();
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0]["payload"]["summary"], SUMMARY);
}

#[tokio::test]
async fn failed_and_interrupted_compactions_leave_the_history_and_rollout_as_they_were() {
    let script = Script::new([
        text_reply(0, &long_answer(0)),
        mock_provider::error_status(400, "invalid_request_error", "summaries are off today"),
        stalled_text_reply("msg_stalled", &["half a summ"]),
        text_reply(3, "after"),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    let lines_before = s.rollout().len();

    let failed = compact(&mut s.daemon, &s.thread_id.clone()).await;
    let end = single_turn_end(&failed, "failed");
    let message = end["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("compaction failed"), "{message}");
    assert!(message.contains("summaries are off today"), "{message}");
    // The item completes all the same, failed and saying why.
    let items = items_of(&failed, "item/completed", "contextCompaction");
    assert_eq!(items.len(), 1, "{failed:#?}");
    assert_eq!(items[0]["status"], "failed");
    let reason = items[0]["error"].as_str().unwrap_or_default();
    assert!(reason.contains("summaries are off today"), "{reason}");
    let started = items_of(&failed, "item/started", "contextCompaction");
    assert_eq!(started[0]["status"], "inProgress");

    let response = s
        .daemon
        .ok("thread/compact/start", json!({"threadId": s.thread_id}))
        .await;
    assert_eq!(response, json!({}));
    let started = s
        .daemon
        .collect_until(|m| {
            m["method"] == "item/started" && m["params"]["item"]["type"] == "contextCompaction"
        })
        .await;
    let turn_id = params_of(&started, "turn/started")[0]["turn"]["id"].clone();
    s.provider.wait_for_requests(3, TIMEOUT).await;
    s.daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": s.thread_id, "turnId": turn_id}),
        )
        .await;
    let interrupted = s.daemon.until_turn_completed().await;
    single_turn_end(&interrupted, "interrupted");
    let items = items_of(&interrupted, "item/completed", "contextCompaction");
    assert_eq!(items.len(), 1, "{interrupted:#?}");
    assert_eq!(items[0]["status"], "failed");

    // No compacted line, and the next request still carries the whole conversation.
    let rollout = s.rollout();
    assert!(rollout.iter().all(|line| line["type"] != "compacted"));
    assert!(rollout.len() > lines_before);
    s.run_turn("second question").await;
    let bodies = s.bodies(4).await;
    let before = bodies[0]["input"].as_array().cloned().unwrap_or_default();
    let after = bodies[3]["input"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        after[..before.len()],
        before[..],
        "the old history is intact"
    );
    assert_eq!(texts_of(&after, "assistant"), [long_answer(0)]);
}

#[tokio::test]
async fn a_compaction_is_refused_while_a_turn_runs() {
    let script = Script::new([stalled_text_reply("msg_slow", &["thinking"])]);
    let mut s = session(script, &[], json!({})).await;
    let started = s.start_turn("long task", json!({})).await;
    s.provider.wait_for_requests(1, TIMEOUT).await;
    let error = s
        .daemon
        .err("thread/compact/start", json!({"threadId": s.thread_id}))
        .await;
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("is running"), "{message}");
    let turn_id = started["result"]["turn"]["id"].clone();
    s.daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": s.thread_id, "turnId": turn_id}),
        )
        .await;
    s.daemon.until_turn_completed().await;
}

#[tokio::test]
async fn resume_after_a_restart_sends_exactly_the_compacted_history() {
    let home = tempfile::tempdir().unwrap();
    let first_provider = MockProvider::start(Script::new([
        text_reply(0, &long_answer(0)),
        text_reply(1, SUMMARY),
        text_reply(2, "second answer"),
    ]))
    .await
    .unwrap();
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_provider));
    first.initialize().await;
    let id = first.start_thread(json!({})).await;
    text_turn(&mut first, &id, "first question").await;
    compact(&mut first, &id).await;
    text_turn(&mut first, &id, "second question").await;
    first.close_stdin();
    assert_eq!(first.wait_exit().await, Some(0));
    let live = request_input(&first_provider, 2);

    let second_provider = MockProvider::start(Script::new([text_reply(3, "third answer")]))
        .await
        .unwrap();
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_provider));
    second.initialize().await;
    second.ok("thread/resume", json!({"threadId": id})).await;
    text_turn(&mut second, &id, "third question").await;
    let resumed = request_input(&second_provider, 0);

    // The resumed request is the live one, then the answer it got and the new question.
    assert_eq!(resumed[..live.len()], live[..]);
    assert_eq!(
        texts_of(&resumed[live.len()..], "assistant"),
        ["second answer"]
    );
    assert_eq!(texts_of(&resumed[live.len()..], "user"), ["third question"]);
    assert!(texts_of(&resumed, "assistant")
        .iter()
        .all(|t| !t.starts_with("answer 0")));
}

#[tokio::test]
async fn compact_prompt_replaces_the_request_for_a_summary() {
    let script = Script::new([text_reply(0, "answer"), text_reply(1, SUMMARY)]);
    let prompt = "Summarize tersely, please.";
    let setting = format!("compact_prompt=\"{prompt}\"");
    let mut s = session(script, &[&setting], json!({})).await;
    s.run_turn("first question").await;
    let compaction = compact(&mut s.daemon, &s.thread_id.clone()).await;
    single_turn_end(&compaction, "completed");
    let bodies = s.bodies(2).await;
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        texts_of(&input, "user").last().map(String::as_str),
        Some(prompt)
    );
}

#[tokio::test]
async fn a_turn_started_during_a_compaction_runs_after_it_on_the_compacted_history() {
    let script = Script::new([
        text_reply(0, &long_answer(0)),
        text_reply(1, SUMMARY),
        text_reply(2, "after"),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    let thread_id = s.thread_id.clone();
    s.daemon
        .ok("thread/compact/start", json!({"threadId": thread_id}))
        .await;
    // Sent at once: the compaction turn takes no input, so this starts the next turn after it.
    let started = s.start_turn("second question", json!({})).await;
    let next_turn_id = started["result"]["turn"]["id"].clone();
    let mut messages = s.daemon.until_turn_completed().await;
    messages.extend(s.daemon.until_turn_completed().await);
    let ends: Vec<(Value, Value)> = params_of(&messages, "turn/completed")
        .iter()
        .map(|p| (p["turn"]["id"].clone(), p["turn"]["status"].clone()))
        .collect();
    assert_eq!(ends.len(), 2);
    assert_ne!(ends[0].0, next_turn_id, "the compaction turn ends first");
    assert_eq!(ends[1], (next_turn_id, json!("completed")));
    let bodies = s.bodies(3).await;
    let input = bodies[2]["input"].as_array().cloned().unwrap_or_default();
    assert!(texts_of(&input, "assistant").is_empty());
    assert!(texts_of(&input, "user").iter().any(|t| t.contains(SUMMARY)));
}

#[tokio::test]
async fn a_summarization_answer_without_text_fails_the_compaction_and_changes_nothing() {
    let script = Script::new([
        text_reply(0, "answer"),
        ResponseBuilder::new("r_empty")
            .created()
            .completed(Usage::small(), None)
            .build(),
        text_reply(2, "after"),
    ]);
    let mut s = session(script, &[], json!({})).await;
    s.run_turn("first question").await;
    let failed = compact(&mut s.daemon, &s.thread_id.clone()).await;
    let end = single_turn_end(&failed, "failed");
    let message = end["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no text"), "{message}");
    s.run_turn("second question").await;
    let bodies = s.bodies(3).await;
    let input = bodies[2]["input"].as_array().cloned().unwrap_or_default();
    assert_eq!(texts_of(&input, "assistant"), ["answer"]);
}
