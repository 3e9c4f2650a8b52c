//! How one response's items reach the client (docs/ARCHITECTURE.md §2, §6), through the real
//! binary and the loopback provider: hidden citation markup across the added/delta boundary,
//! plan-mode segments, reasoning deltas owned by the active item, sequential-cutoff summaries,
//! the raw-reasoning flag, a delta without an active item or naming another item, and ids for
//! items the provider sent without one.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

#[tokio::test]
async fn citations_across_seed_and_delta_boundaries_never_reach_the_client() {
    let events = |b: ResponseBuilder| {
        b.message_added(Some("msg_1"), "hello <oai-mem-")
            .text_delta("msg_1", "citation>doc-7</oai-mem-")
            .text_delta("msg_1", "citation> world")
            .message_done(
                Some("msg_1"),
                "hello <oai-mem-citation>doc-7</oai-mem-citation> world",
            )
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &[],
        json!({}),
    )
    .await;
    let turn = s.run_turn("hi").await;
    single_turn_end(&turn, "completed");
    let started = items_of(&turn, "item/started", "agentMessage");
    assert_eq!(started.len(), 1);
    let streamed = format!(
        "{}{}",
        started[0]["text"].as_str().unwrap_or_default(),
        joined_deltas(&turn, "item/agentMessage/delta")
    );
    assert_eq!(streamed, "hello  world");
    let completed = items_of(&turn, "item/completed", "agentMessage");
    assert_eq!(completed[0]["text"], "hello  world");
    for message in &turn {
        assert!(
            !message.to_string().contains("oai-mem"),
            "markup leaked: {message}"
        );
    }
    // The model's own history keeps what it wrote.
    let history = rollout_response_items(&s.rollout());
    assert!(history.iter().any(|item| item["content"][0]["text"]
        == "hello <oai-mem-citation>doc-7</oai-mem-citation> world"));
}

#[tokio::test]
async fn plan_parser_across_added_and_delta_boundaries_makes_a_plan_item() {
    let events = |b: ResponseBuilder| {
        b.message_added(Some("msg_1"), "Intro\n<proposed")
            .text_delta("msg_1", "_plan>\n- step")
            .text_delta("msg_1", " one\n</proposed_plan>\nOutro")
            .message_done(
                Some("msg_1"),
                "Intro\n<proposed_plan>\n- step one\n</proposed_plan>\nOutro",
            )
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &[],
        json!({}),
    )
    .await;
    let response = s
        .start_turn("plan it", json!({"collaborationMode": {"mode": "plan"}}))
        .await;
    let turn_id = response["result"]["turn"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let turn = s.daemon.until_turn_completed().await;
    single_turn_end(&turn, "completed");
    let plan_id = format!("{turn_id}-plan");
    let sequence: Vec<String> = turn
        .iter()
        .filter_map(|m| {
            let method = m["method"].as_str()?;
            let item_type = m["params"]["item"]["type"].as_str().unwrap_or("");
            method
                .starts_with("item/")
                .then(|| format!("{method} {item_type}").trim().to_string())
        })
        .filter(|entry| !entry.contains("userMessage"))
        .collect();
    assert_eq!(
        sequence,
        vec![
            "item/started agentMessage",
            "item/agentMessage/delta",
            "item/started plan",
            "item/plan/delta",
            "item/plan/delta",
            "item/agentMessage/delta",
            "item/completed plan",
            "item/completed agentMessage",
        ]
    );
    assert_eq!(joined_deltas(&turn, "item/plan/delta"), "- step one\n");
    assert_eq!(
        joined_deltas(&turn, "item/agentMessage/delta"),
        "Intro\nOutro"
    );
    let plan = items_of(&turn, "item/completed", "plan");
    assert_eq!(plan[0]["id"], plan_id.as_str());
    assert_eq!(plan[0]["text"], "- step one\n");
    assert_eq!(
        params_of(&turn, "item/plan/delta")[0]["itemId"],
        plan_id.as_str()
    );
    assert_eq!(
        items_of(&turn, "item/completed", "agentMessage")[0]["text"],
        "Intro\nOutro"
    );
    let persisted = rollout_turn_items(&s.rollout());
    assert!(persisted
        .iter()
        .any(|item| item["type"] == "plan" && item["id"] == plan_id.as_str()));
}

#[tokio::test]
async fn plan_mode_defers_the_messages_start_until_it_has_visible_text() {
    let text = "<proposed_plan>\n- a\n</proposed_plan>\nAfter";
    let events = |b: ResponseBuilder| {
        b.message_added(Some("msg_1"), "")
            .text_delta("msg_1", "<proposed_plan>\n- a\n</proposed_plan>\n")
            .text_delta("msg_1", "After")
            .message_done(Some("msg_1"), text)
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &[],
        json!({}),
    )
    .await;
    s.start_turn("plan", json!({"collaborationMode": {"mode": "plan"}}))
        .await;
    let turn = s.daemon.until_turn_completed().await;
    let starts: Vec<&str> = params_of(&turn, "item/started")
        .iter()
        .filter_map(|p| p["item"]["type"].as_str())
        .collect();
    assert_eq!(starts, vec!["userMessage", "plan", "agentMessage"]);
    assert_eq!(joined_deltas(&turn, "item/agentMessage/delta"), "After");
}

/// A reasoning item as added, with `id` only when given.
fn reasoning_item(id: Option<&str>) -> Value {
    let mut item = json!({"type": "reasoning", "summary": []});
    if let Some(id) = id {
        item["id"] = json!(id);
    }
    item
}

/// A reasoning item as done with `summaries`, with `id` only when given.
fn reasoning_done_item(id: Option<&str>, summaries: &[&str]) -> Value {
    let summary: Vec<Value> = summaries
        .iter()
        .map(|text| json!({"type": "summary_text", "text": text}))
        .collect();
    let mut item = json!({"type": "reasoning", "summary": summary, "encrypted_content": "enc"});
    if let Some(id) = id {
        item["id"] = json!(id);
    }
    item
}

fn summary_event(kind: &str, item_id: &str, index: i64, text: &str) -> Value {
    let mut value = json!({"type": kind, "item_id": item_id, "summary_index": index});
    match kind {
        "response.reasoning_summary_text.delta" => value["delta"] = json!(text),
        "response.reasoning_summary_text.done" => value["text"] = json!(text),
        _ => value["part"] = json!({"type": "summary_text", "text": ""}),
    }
    value
}

fn raw_delta(item_id: &str, delta: &str) -> Value {
    json!({"type": "response.reasoning_text.delta", "item_id": item_id, "content_index": 0,
        "delta": delta})
}

#[tokio::test]
async fn reasoning_delta_carries_the_active_items_id_even_when_the_provider_gave_none() {
    // The provider sends no item ids at all: deltas name "", the items have none.
    let events = |b: ResponseBuilder| {
        b.output_item_added(reasoning_item(None))
            .event(summary_event(
                "response.reasoning_summary_part.added",
                "",
                0,
                "",
            ))
            .event(summary_event(
                "response.reasoning_summary_text.delta",
                "",
                0,
                "**Plan** ",
            ))
            .event(summary_event(
                "response.reasoning_summary_text.delta",
                "",
                0,
                "look",
            ))
            .output_item_done(reasoning_done_item(None, &["**Plan** look"]))
            .message_added(None, "")
            .text_delta("", "Done")
            .message_done(None, "Done")
    };
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build(),
        Reply::Sse(mock_provider::simple_text_response(
            "r2", "msg_2", "again", 1,
        )),
    ]);
    let mut s = session(script, &[], json!({})).await;
    let turn = s.run_turn("think").await;
    single_turn_end(&turn, "completed");
    let reasoning_id = items_of(&turn, "item/started", "reasoning")[0]["id"].clone();
    assert!(reasoning_id.as_str().is_some_and(|id| !id.is_empty()));
    for delta in params_of(&turn, "item/reasoning/summaryTextDelta") {
        assert_eq!(delta["itemId"], reasoning_id);
    }
    assert_eq!(
        params_of(&turn, "item/reasoning/summaryPartAdded")[0]["itemId"],
        reasoning_id
    );
    assert_eq!(
        items_of(&turn, "item/completed", "reasoning")[0]["id"],
        reasoning_id
    );
    assert_eq!(
        items_of(&turn, "item/completed", "reasoning")[0]["summary"],
        json!(["**Plan** look"])
    );
    let message_id = items_of(&turn, "item/started", "agentMessage")[0]["id"].clone();
    assert!(message_id.as_str().is_some_and(|id| !id.is_empty()) && message_id != reasoning_id);
    assert_eq!(
        params_of(&turn, "item/agentMessage/delta")[0]["itemId"],
        message_id
    );
    assert_eq!(
        items_of(&turn, "item/completed", "agentMessage")[0]["id"],
        message_id
    );
    // The same ids in the stored turn items; the next request's history carries the items
    // without them, since the provider never issued them.
    let persisted = rollout_turn_items(&s.rollout());
    assert!(persisted.iter().any(|item| item["id"] == reasoning_id));
    assert!(persisted.iter().any(|item| item["id"] == message_id));
    s.run_turn("again").await;
    let bodies = s.bodies(2).await;
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    let reasoning = input.iter().find(|item| item["type"] == "reasoning");
    assert_eq!(
        reasoning.map(|item| item.get("id")),
        Some(None),
        "{input:?}"
    );
    let assistant = input.iter().find(|item| item["role"] == "assistant");
    assert_eq!(
        assistant.map(|item| item.get("id")),
        Some(None),
        "{input:?}"
    );
}

#[tokio::test]
async fn sequential_cutoff_renders_done_summaries_for_the_active_item_and_drops_a_late_one() {
    let events = |b: ResponseBuilder| {
        b.output_item_added(reasoning_item(Some("rs_1")))
            .event(summary_event(
                "response.reasoning_summary_part.added",
                "rs_1",
                0,
                "",
            ))
            .event(summary_event(
                "response.reasoning_summary_text.delta",
                "rs_1",
                0,
                "step",
            ))
            .event(summary_event(
                "response.reasoning_summary_text.done",
                "rs_1",
                0,
                "step one",
            ))
            .event(summary_event(
                "response.reasoning_summary_part.added",
                "rs_1",
                1,
                "",
            ))
            .event(summary_event(
                "response.reasoning_summary_text.delta",
                "rs_1",
                1,
                "step",
            ))
            .event(summary_event(
                "response.reasoning_summary_text.done",
                "rs_1",
                1,
                "step two",
            ))
            .output_item_done(reasoning_done_item(Some("rs_1"), &["step one", "step two"]))
            .message_added(Some("msg_1"), "")
            .event(summary_event(
                "response.reasoning_summary_text.done",
                "rs_1",
                2,
                "late step",
            ))
            .text_delta("msg_1", "Answer")
            .message_done(Some("msg_1"), "Answer")
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &["reasoning_summary_mode=\"sequential_cutoff\""],
        json!({}),
    )
    .await;
    let turn = s.run_turn("think").await;
    single_turn_end(&turn, "completed");
    let deltas: Vec<(Value, Value, Value)> = params_of(&turn, "item/reasoning/summaryTextDelta")
        .iter()
        .map(|p| {
            (
                p["itemId"].clone(),
                p["delta"].clone(),
                p["summaryIndex"].clone(),
            )
        })
        .collect();
    assert_eq!(
        deltas,
        vec![
            (json!("rs_1"), json!("step one"), json!(0)),
            (json!("rs_1"), json!("step two"), json!(1)),
        ]
    );
    let breaks: Vec<Value> = params_of(&turn, "item/reasoning/summaryPartAdded")
        .iter()
        .map(|p| p["summaryIndex"].clone())
        .collect();
    assert_eq!(breaks, vec![json!(1)]);
    assert_eq!(joined_deltas(&turn, "item/agentMessage/delta"), "Answer");
    assert!(!turn.iter().any(|m| m.to_string().contains("late step")));
}

#[tokio::test]
async fn raw_reasoning_respects_its_flag() {
    let transcript = || {
        ResponseBuilder::new("r")
            .created()
            .output_item_added(reasoning_item(Some("rs_1")))
            .event(raw_delta("rs_1", "thinking raw"))
            .output_item_done(reasoning_done_item(Some("rs_1"), &[]))
            .message_added(Some("msg_1"), "")
            .text_delta("msg_1", "ok")
            .message_done(Some("msg_1"), "ok")
            .completed(Usage::small(), None)
            .build()
    };
    let mut s = session(Script::new([transcript(), transcript()]), &[], json!({})).await;
    let hidden = s.run_turn("first").await;
    single_turn_end(&hidden, "completed");
    assert!(params_of(&hidden, "item/reasoning/textDelta").is_empty());

    let shown_thread = s
        .daemon
        .start_thread(json!({"config": {"show_raw_agent_reasoning": true}}))
        .await;
    s.thread_id = shown_thread;
    let shown = s.run_turn("second").await;
    single_turn_end(&shown, "completed");
    let raw = params_of(&shown, "item/reasoning/textDelta");
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0]["delta"], "thinking raw");
    assert_eq!(raw[0]["itemId"], "rs_1");
    assert_eq!(raw[0]["contentIndex"], 0);
}

#[tokio::test]
async fn a_delta_without_an_active_item_is_a_warning_and_never_attached_to_a_guess() {
    let events = |b: ResponseBuilder| {
        b.text_delta("msg_ghost", "orphan text")
            .message_added(Some("msg_1"), "")
            .text_delta("msg_1", "real")
            .message_done(Some("msg_1"), "real")
            .event(summary_event(
                "response.reasoning_summary_text.delta",
                "rs_x",
                0,
                "orphan summary",
            ))
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &[],
        json!({}),
    )
    .await;
    let turn = s.run_turn("hi").await;
    single_turn_end(&turn, "completed");
    let warnings = params_of(&turn, "warning");
    assert_eq!(warnings.len(), 2, "{turn:#?}");
    assert!(warnings[0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("without an active item")));
    assert_eq!(joined_deltas(&turn, "item/agentMessage/delta"), "real");
    assert!(params_of(&turn, "item/reasoning/summaryTextDelta").is_empty());
    assert!(!turn
        .iter()
        .any(|m| m["method"] != "warning" && m.to_string().contains("orphan")));
}

#[tokio::test]
async fn an_item_never_done_is_flushed_at_completed_but_not_committed() {
    let events = |b: ResponseBuilder| {
        b.message_added(Some("msg_1"), "")
            .text_delta("msg_1", "tail <oai")
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &[],
        json!({}),
    )
    .await;
    let turn = s.run_turn("hi").await;
    single_turn_end(&turn, "completed");
    // finish() released the held-back "<oai" exactly once.
    assert_eq!(joined_deltas(&turn, "item/agentMessage/delta"), "tail <oai");
    assert!(items_of(&turn, "item/completed", "agentMessage").is_empty());
}

#[tokio::test]
async fn a_text_delta_naming_another_item_is_dropped_never_appended_to_the_active_one() {
    // msg_1 is open when a delta naming msg_2 arrives: the delta goes to the item it names, and
    // with msg_2 not open it is an orphan. Appending it to msg_1 would stream text to the client
    // that msg_1's completed item lacks. Deltas with an empty id still go to the active item.
    let events = |b: ResponseBuilder| {
        b.message_added(Some("msg_1"), "")
            .text_delta("msg_1", "kept ")
            .text_delta("msg_2", "stray")
            .text_delta("", "too")
            .message_done(Some("msg_1"), "kept too")
    };
    let mut s = session(
        Script::new([ResponseBuilder::new("r1")
            .created()
            .with(events)
            .completed(Usage::small(), None)
            .build()]),
        &[],
        json!({}),
    )
    .await;
    let turn = s.run_turn("hi").await;
    single_turn_end(&turn, "completed");
    let streamed = joined_deltas(&turn, "item/agentMessage/delta");
    let completed = items_of(&turn, "item/completed", "agentMessage");
    assert_eq!(completed.len(), 1, "{turn:#?}");
    assert_eq!(completed[0]["text"], "kept too");
    assert_eq!(streamed, "kept too", "streamed text differs from the item");
    for delta in params_of(&turn, "item/agentMessage/delta") {
        assert_eq!(delta["itemId"], "msg_1");
    }
    let warnings = params_of(&turn, "warning");
    assert_eq!(warnings.len(), 1, "{turn:#?}");
    let warning = warnings[0]["message"].as_str().unwrap_or_default();
    assert!(
        warning.contains("msg_2") && warning.contains("msg_1"),
        "the warning names the delta's item and the open one: {warning}"
    );
}

/// A fast stream's text is gathered for a moment before it goes out (`server::fanout`,
/// `STREAM_SPACING`); text held that way still reaches the client when nothing follows it —
/// here the provider stalls mid-message, so no later event could carry it out.
#[tokio::test]
async fn streamed_text_arrives_whole_when_the_provider_stalls_after_it() {
    let pieces: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let mut s = session(
        Script::new([stalled_text_reply("msg_1", &refs)]),
        &[],
        json!({}),
    )
    .await;
    s.start_turn("hi", json!({})).await;
    let expected = pieces.concat();
    let mut streamed = String::new();
    let mut messages = Vec::new();
    while streamed != expected {
        let message = s.daemon.next_message().await;
        if message["method"] == "item/agentMessage/delta" {
            streamed.push_str(message["params"]["delta"].as_str().unwrap_or_default());
        }
        messages.push(message);
    }
    // The item was announced before its text, and the turn is still waiting on the provider.
    let methods = methods(&messages);
    let started = methods.iter().position(|m| m == "item/started");
    let first_delta = methods.iter().position(|m| m == "item/agentMessage/delta");
    assert!(started < first_delta, "{methods:?}");
    assert!(
        !methods.iter().any(|m| m == "turn/completed"),
        "{methods:?}"
    );
}
