//! Web searches through the ACP bridge editors use (`@agentclientprotocol/codex-acp`, pinned in
//! `tests/acp/package.json`, driven as in `tests/acp_bridge.rs`): the provider runs a search, opens
//! a page and looks for a pattern in it, each a `web_search_call` that openturn shows as a
//! `webSearch` item; the bridge turns every one into a completed `search` tool call titled by its
//! action, live and again when a fresh bridge loads the session, and neither openturn nor the
//! bridge reports an error on the way.
//!
//! Without node or the installed bridge the test is skipped with the reason printed, except
//! under `CI=true`, where it fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod acp_support;
mod support;
mod turn_support;

use serde_json::{json, Value};

use acp_support::*;
use support::*;
use turn_support::*;

/// The three searches of the script: id, the action the provider reports, and the title the
/// bridge derives from it.
fn searches() -> [(&'static str, Value, &'static str); 3] {
    [
        (
            "ws_query",
            json!({"type": "search", "query": "openturn release notes",
                "queries": ["openturn release notes"]}),
            "Web search: openturn release notes",
        ),
        (
            "ws_open",
            json!({"type": "open_page", "url": "https://example.com/notes"}),
            "Open page: https://example.com/notes",
        ),
        (
            "ws_find",
            json!({"type": "find_in_page", "url": "https://example.com/notes",
                "pattern": "0.2"}),
            "Find in page for '0.2' in https://example.com/notes",
        ),
    ]
}

/// One response: each search announced without its action (as providers stream them), then
/// completed with it, then the answer.
fn search_response() -> Reply {
    let mut response = ResponseBuilder::new("r1").created();
    for (id, action, _) in searches() {
        response = response
            .output_item_added(json!({"type": "web_search_call", "id": id,
                "status": "in_progress"}))
            .output_item_done(json!({"type": "web_search_call", "id": id,
                "status": "completed", "action": action}));
    }
    response
        .text_message("m1", &["Version 0.2 is out."])
        .completed(Usage::small(), None)
        .build()
}

/// The completed `search` tool call the bridge reported for `id`, from its start or an update.
fn completed_search<'a>(seen: &'a [Value], id: &str) -> Option<&'a Value> {
    let mut reports = updates(seen, "tool_call");
    reports.extend(updates(seen, "tool_call_update"));
    reports
        .into_iter()
        .find(|u| u["toolCallId"] == id && u["status"] == "completed")
}

#[tokio::test]
async fn the_acp_bridge_shows_every_kind_of_web_search_live_and_when_loaded() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new([
        search_response(),
        message_reply("r_title", "m_title", &["{\"title\": \"Release notes\"}"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let cwd = project.path().display().to_string();

    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let (result, seen) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id,
                "prompt": [{"type": "text", "text": "What is new in openturn?"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    for (id, _, title) in searches() {
        let started = updates(&seen, "tool_call")
            .into_iter()
            .find(|call| call["toolCallId"] == id)
            .unwrap_or_else(|| panic!("no tool call for {id}: {seen:#?}"));
        assert_eq!(started["kind"], "search", "{started}");
        let done = completed_search(&seen, id)
            .unwrap_or_else(|| panic!("{id} never completed: {seen:#?}"));
        assert_eq!(done["title"], title, "{done}");
    }
    let answer = updates(&seen, "agent_message_chunk");
    assert!(
        answer
            .iter()
            .any(|u| u["content"]["text"].as_str().unwrap_or("").contains("0.2")),
        "{seen:#?}"
    );
    let mut stderr = client.stderr.lock().map(|l| l.clone()).unwrap_or_default();
    client.shutdown().await;

    // A fresh bridge (and daemon) loads the session: each search is replayed, complete.
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let (_, replay) = client
        .ok(
            "session/load",
            json!({"sessionId": session_id, "cwd": cwd, "mcpServers": []}),
        )
        .await;
    for (id, _, title) in searches() {
        let replayed = completed_search(&replay, id)
            .unwrap_or_else(|| panic!("{id} not replayed: {replay:#?}"));
        assert_eq!(replayed["kind"], "search", "{replayed}");
        assert_eq!(replayed["title"], title, "{replayed}");
    }
    stderr.extend(client.stderr.lock().map(|l| l.clone()).unwrap_or_default());
    client.shutdown().await;

    // Nothing the bridge asked openturn was refused, and the bridge logged no error.
    let answers = recorded(&home.path().join("bridge-out.jsonl"));
    let errors: Vec<&Value> = answers
        .iter()
        .filter(|m| m.get("error").is_some())
        .collect();
    assert!(
        errors.is_empty(),
        "openturn refused bridge calls: {errors:#?}"
    );
    let complaints: Vec<&String> = stderr
        .iter()
        .filter(|line| line.to_lowercase().contains("error"))
        .collect();
    assert!(
        complaints.is_empty(),
        "the bridge logged errors: {complaints:#?}"
    );
}
