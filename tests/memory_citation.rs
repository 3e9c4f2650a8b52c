//! Hidden memory citations (`<oai-mem-citation>` blocks) leave the visible text and land on the
//! completed agent message as `memoryCitation` (the reference schema's `MemoryCitation`:
//! `entries` of `{path, lineStart, lineEnd, note}` and `threadIds`), persisted so `thread/read`
//! shows them too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

const BLOCK: &str = "<oai-mem-citation>\n<citation_entries>\nMEMORY.md:3-5|note=[build steps]\n\
rollout_summaries/a.md:10-12|note=[release notes]\n</citation_entries>\n<rollout_ids>\n\
019c6e27-e55b-73d1-87d8-4e01f1f75043\n</rollout_ids>\n</oai-mem-citation>";

fn expected() -> Value {
    json!({
        "entries": [
            {"path": "MEMORY.md", "lineStart": 3, "lineEnd": 5, "note": "build steps"},
            {"path": "rollout_summaries/a.md", "lineStart": 10, "lineEnd": 12,
             "note": "release notes"},
        ],
        "threadIds": ["019c6e27-e55b-73d1-87d8-4e01f1f75043"],
    })
}

#[tokio::test]
async fn memory_citations_reach_the_completed_agent_message_and_thread_read() {
    let full = format!("Use make.\n{BLOCK}");
    // The block is split mid-tag and mid-entry across deltas.
    let (first, rest) = full.split_at(20);
    let (second, third) = rest.split_at(60);
    let events = |b: ResponseBuilder| {
        b.message_added(Some("msg_1"), "")
            .text_delta("msg_1", first)
            .text_delta("msg_1", second)
            .text_delta("msg_1", third)
            .message_done(Some("msg_1"), &full)
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
    let turn = s.run_turn("how do I build?").await;
    single_turn_end(&turn, "completed");
    let completed = items_of(&turn, "item/completed", "agentMessage");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["text"], "Use make.\n");
    assert_eq!(completed[0]["memoryCitation"], expected());
    let read = s
        .daemon
        .ok(
            "thread/read",
            json!({"threadId": s.thread_id, "includeTurns": true}),
        )
        .await;
    let items = read["thread"]["turns"][0]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let message = items
        .iter()
        .find(|item| item["type"] == "agentMessage")
        .unwrap_or_else(|| panic!("no agent message in {read}"));
    assert_eq!(message["memoryCitation"], expected());
    assert_eq!(message["text"], "Use make.\n");
}

#[tokio::test]
async fn an_agent_message_without_citations_has_a_null_memory_citation() {
    let events = |b: ResponseBuilder| b.text_message("msg_1", &["plain ", "text"]);
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
    let completed = items_of(&turn, "item/completed", "agentMessage");
    assert_eq!(completed.len(), 1);
    assert!(completed[0].get("memoryCitation").is_some());
    assert_eq!(completed[0]["memoryCitation"], Value::Null);
}
