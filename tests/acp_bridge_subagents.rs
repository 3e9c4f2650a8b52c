//! The ACP bridge (`tests/acp_support`) in front of a model that delegates: a prompt whose
//! model spawns a sub-agent and waits for it ends normally, the bridge shows the spawn and the
//! wait as tool calls that complete, and
//! every app-server request the bridge made was answered without an error even though the
//! child's thread announces itself and streams its own turn on the same connection.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod acp_support;
mod subagent_support;
mod support;
mod turn_support;

use openturn::mock_provider::{Responder, Script};
use serde_json::json;

use acp_support::*;
use subagent_support::*;
use support::*;
use turn_support::*;

#[tokio::test]
async fn the_acp_bridge_shows_a_sub_agent_call_without_errors() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    // A request without tools is the bridge's title request, answered with a title.
    let provider = MockProvider::start(Script::answering(Responder::new(|request| {
        if has_tools(&request.body) {
            model_reply(request)
        } else {
            message_reply("r_title", "m_title", &["{\"title\": \"Delegation\"}"])
        }
    })))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    write_config(home.path(), &provider);
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().display().to_string();
    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&cwd).await;
    let prompt = json!({"sessionId": session_id,
        "prompt": [{"type": "text", "text": "DELEGATE the question"}]});
    let (result, seen) = client.ok("session/prompt", prompt).await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let replies = chunk_text(&updates(&seen, "agent_message_chunk"));
    assert!(replies.contains("ok"), "{seen:#?}");

    // The bridge shows each sub-agent call as a tool call that completes.
    let calls = updates(&seen, "tool_call");
    let mut finished = updates(&seen, "tool_call_update");
    finished.extend(calls.iter().copied());
    finished.retain(|update| update["status"] == "completed");
    for (id, title) in [("call_spawn", "spawnAgent"), ("call_wait", "wait")] {
        let call = calls
            .iter()
            .find(|call| call["toolCallId"] == id)
            .unwrap_or_else(|| panic!("no {id} tool call: {seen:#?}"));
        assert_eq!(call["title"], title, "{call}");
        assert!(
            finished.iter().any(|update| update["toolCallId"] == id),
            "{id} never completed: {seen:#?}"
        );
    }

    // The child ran its turn on the provider, and the parent got its answer.
    let requests = provider.requests();
    request_ending_with(&requests, CHILD_TASK);
    let waited = output_of(&requests, "call_wait");
    assert_eq!(waited["timed_out"], false, "{waited}");

    client.shutdown().await;
    let answers = answers_without_errors(home.path());
    let spawned = answers.iter().any(|m| {
        m["method"] == "item/completed" && m["params"]["item"]["type"] == "collabAgentToolCall"
    });
    assert!(spawned, "no sub-agent item reached the bridge");
}
