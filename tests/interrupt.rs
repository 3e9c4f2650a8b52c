//! Every way a turn ends produces exactly one `turn/completed`: completion, provider failure,
//! interrupt mid-stream, interrupt while a command runs (the wait ends; the command, as the
//! reference's, runs on as a background terminal until its thread ends), a client that
//! disconnects. Interrupt is idempotent. Steered input is delivered at the next
//! sampling boundary of the running turn.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// A response that streams a partial message and then stays open forever.
fn stalled_reply() -> Reply {
    Reply::Sse(
        ResponseBuilder::new("r1")
            .created()
            .message_added(Some("msg_1"), "")
            .text_delta("msg_1", "partial")
            .into_reply()
            .held_open_after_end(),
    )
}

async fn interrupt(s: &mut Session, turn_id: &Value) -> Value {
    let thread_id = s.thread_id.clone();
    s.daemon
        .request(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await
}

#[tokio::test]
async fn interrupt_mid_stream_ends_the_turn_once_and_the_next_turn_works() {
    let script = Script::new([
        stalled_reply(),
        Reply::Sse(mock_provider::simple_text_response(
            "r2", "msg_2", "fresh", 2,
        )),
    ]);
    let mut s = session(script, &[], json!({})).await;
    let response = s.start_turn("hi", json!({})).await;
    let turn_id = response["result"]["turn"]["id"].clone();
    let mut messages = s
        .daemon
        .collect_until(|m| m["method"] == "item/agentMessage/delta")
        .await;
    assert_eq!(interrupt(&mut s, &turn_id).await["result"], json!({}));
    messages.extend(s.daemon.until_turn_completed().await);
    let turn = single_turn_end(&messages, "interrupted");
    assert_eq!(turn["error"], Value::Null);
    assert!(items_of(&messages, "item/completed", "agentMessage").is_empty());
    // A second interrupt, for a turn that already ended, answers at once.
    assert_eq!(interrupt(&mut s, &turn_id).await["result"], json!({}));

    let next = s.run_turn("next").await;
    single_turn_end(&next, "completed");
    let bodies = s.bodies(2).await;
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    assert!(
        !input.iter().any(|item| item["role"] == "assistant"),
        "half-recorded: {input:#?}"
    );
    let lines = s.rollout();
    let ends: Vec<&Value> = lines.iter().filter(|l| l["type"] == "turn_ended").collect();
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["payload"]["status"], "interrupted");
    // Dropping the stream hung up on the provider.
    assert!(s.provider.closed_connections() >= 1);
}

#[tokio::test]
async fn interrupt_ends_the_wait_on_a_command_which_runs_on_until_the_daemon_ends() {
    let workdir = tempfile::tempdir().unwrap();
    let cmd = "sleep 30 & echo $! > bg.pid; echo started; wait";
    let first = ResponseBuilder::new("r1")
        .created()
        .exec_call("fc_1", "call_1", json!({"cmd": cmd, "login": false}))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_2", &["after"]);
    let params = json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
        "cwd": workdir.path().display().to_string()});
    let mut s = session(Script::new([first, second]), &[], params).await;
    let response = s.start_turn("hang", json!({})).await;
    let turn_id = response["result"]["turn"]["id"].clone();
    let mut messages = s
        .daemon
        .collect_until(|m| m["method"] == "item/commandExecution/outputDelta")
        .await;
    assert_eq!(interrupt(&mut s, &turn_id).await["result"], json!({}));
    messages.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&messages, "interrupted");
    assert!(items_of(&messages, "item/completed", "commandExecution").is_empty());
    let pid = std::fs::read_to_string(workdir.path().join("bg.pid")).unwrap();
    let pid = pid.trim().to_string();
    assert!(!process_is_dead(&pid), "the interrupt killed {pid}");
    // The call got an output, so the next request is well formed.
    let next = s.run_turn("next").await;
    single_turn_end(&next, "completed");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].0, "call_1");
    assert!(outputs[0].1.contains("interrupted"));
    // The command's whole process group goes with the daemon.
    s.daemon.close_stdin();
    assert_eq!(s.daemon.wait_exit().await, Some(0));
    assert!(
        poll_until(|| process_is_dead(&pid)).await,
        "background child {pid} outlived the daemon"
    );
}

#[tokio::test]
async fn steer_mid_turn_is_delivered_at_the_next_sampling_boundary() {
    // The first response ends with a client-tool call, so the turn is provably still running
    // (waiting on the client) when the steer arrives.
    let first = ResponseBuilder::new("r1")
        .created()
        .text_message("msg_1", &["Looking it up."])
        .function_call_json("fc_1", "call_1", "lookup", json!({"q": "x"}))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_2", &["steered answer"]);
    let tools = json!({"dynamicTools": [{"name": "lookup", "description": "Look up",
        "inputSchema": {"type": "object"}}]});
    let mut s = session(Script::new([first, second]), &[], tools).await;
    let response = s.start_turn("first", json!({})).await;
    let turn_id = response["result"]["turn"]["id"].clone();
    let mut messages = s
        .daemon
        .collect_until(|m| m["method"] == "item/tool/call")
        .await;
    let tool_request = messages.last().cloned().unwrap_or_default();
    let thread_id = s.thread_id.clone();
    let wrong = s
        .daemon
        .request(
            "turn/steer",
            json!({"threadId": thread_id, "expectedTurnId": "nope", "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert!(wrong.get("error").is_some(), "{wrong}");
    let steered = s
        .daemon
        .request(
            "turn/steer",
            json!({"threadId": thread_id, "expectedTurnId": turn_id, "input": [{"type": "text", "text": "also this"}]}),
        )
        .await;
    assert_eq!(steered["result"]["turnId"], turn_id);
    let answer = json!({"contentItems": [{"type": "inputText", "text": "found"}], "success": true});
    s.answer(&tool_request["id"], answer).await;
    messages.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&messages, "completed");
    assert_eq!(params_of(&messages, "turn/started").len(), 1);
    // The first response finished whole (usage reported); the steer came at the boundary after it.
    let first_usage = messages
        .iter()
        .position(|m| m["method"] == "thread/tokenUsage/updated");
    let steer_item = messages.iter().position(|m| {
        m["method"] == "item/started" && m["params"]["item"]["content"][0]["text"] == "also this"
    });
    assert!(
        first_usage.is_some() && first_usage < steer_item,
        "{messages:#?}"
    );
    let bodies = s.bodies(2).await;
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<String> = input
        .iter()
        .rev()
        .take(3)
        .map(|i| i["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        kinds,
        vec!["message", "function_call_output", "function_call"]
    );
    assert_eq!(
        input.last().map(|i| i["content"][0]["text"].clone()),
        Some(json!("also this"))
    );
}

#[tokio::test]
async fn a_provider_failure_ends_the_turn_once_as_failed_with_its_error() {
    let failed = mock_provider::ResponseBuilder::new("r1")
        .created()
        .failed("server_error", "upstream broke")
        .into_reply();
    let mut s = session(Script::new([Reply::Sse(failed)]), &[], json!({})).await;
    let turn = s.run_turn("hi").await;
    let end = single_turn_end(&turn, "failed");
    assert!(end["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("upstream broke")));
    let errors = params_of(&turn, "error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["willRetry"], false);
}

#[tokio::test]
async fn a_client_that_disconnects_ends_the_turn_once() {
    let mut s = session(Script::new([stalled_reply()]), &[], json!({})).await;
    s.start_turn("hi", json!({})).await;
    let mut messages = s
        .daemon
        .collect_until(|m| m["method"] == "item/agentMessage/delta")
        .await;
    s.daemon.close_stdin();
    messages.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&messages, "interrupted");
    assert_eq!(s.daemon.wait_exit().await, Some(0));
    let lines = rollout_lines(s.home.path());
    let ends: Vec<&Value> = lines.iter().filter(|l| l["type"] == "turn_ended").collect();
    assert_eq!(ends.len(), 1);
}
