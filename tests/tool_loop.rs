//! From a stream to the next action (docs/ARCHITECTURE.md §6), through the real binary: a tool call is
//! run after its item is done, its output is recorded with the same call id and carried by the
//! next request; `end_turn: false` follows up; a call that cannot run is answered with a
//! synthetic output; client tools (`dynamicTools`) go to the client as `item/tool/call`;
//! `outputSchema` shapes its own turn's requests only;
//! a rerouted model is announced once per turn.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// Approval `never` with full access: commands run unasked (a confined `never` thread refuses
/// what it cannot confine; see tests/sandbox_refusals.rs).
fn never_ask(cwd: &std::path::Path) -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
        "cwd": cwd.display().to_string()})
}

#[tokio::test]
async fn a_tool_round_trip_whose_second_request_carries_the_output_with_the_same_call_id() {
    let workdir = tempfile::tempdir().unwrap();
    let cwd = workdir.path().canonicalize().unwrap();
    let first = ResponseBuilder::new("r1")
        .created()
        .text_message("msg_pre", &["Running ", "a command."])
        .exec_call(
            "fc_1",
            "call_1",
            json!({"cmd": "pwd; echo err 1>&2", "login": false}),
        )
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Done."]);
    let mut s = session(Script::new([first, second]), &[], never_ask(&cwd)).await;
    let turn = s.run_turn("run it").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"][0]["text"], "Done.");

    let started = items_of(&turn, "item/started", "commandExecution");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["id"], "call_1");
    assert_eq!(started[0]["status"], "inProgress");
    assert!(started[0]["processId"]
        .as_str()
        .is_some_and(|pid| pid.parse::<u32>().is_ok()));
    assert_eq!(started[0]["cwd"], cwd.display().to_string());
    assert!(started[0]["command"]
        .as_str()
        .is_some_and(|c| c.ends_with(" -c 'pwd; echo err 1>&2'")));
    let completed = items_of(&turn, "item/completed", "commandExecution");
    // stdout and stderr are two pipes read side by side, so which line arrives first is the
    // scheduler's choice (as in the reference); both must be there, each once, in one of the two
    // orders, and the deltas must add up to exactly what was aggregated.
    let stdout_first = format!("{}\nerr\n", cwd.display());
    let stderr_first = format!("err\n{}\n", cwd.display());
    assert_eq!(completed[0]["status"], "completed");
    assert_eq!(completed[0]["exitCode"], 0);
    let expected_output = completed[0]["aggregatedOutput"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        expected_output == stdout_first || expected_output == stderr_first,
        "{expected_output:?}"
    );
    assert_eq!(
        joined_deltas(&turn, "item/commandExecution/outputDelta"),
        expected_output
    );
    // The tool's item completes before the response's usage (drain, then usage).
    let position = |pred: &dyn Fn(&Value) -> bool| turn.iter().position(pred);
    let tool_done = position(&|m| {
        m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
    });
    let first_usage = position(&|m| m["method"] == "thread/tokenUsage/updated");
    assert!(tool_done < first_usage, "{turn:#?}");

    let bodies = s.bodies(2).await;
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"exec_command"));
    assert_eq!(
        bodies[0]["tools"][0]["parameters"]["required"],
        json!(["cmd"])
    );
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].0, "call_1");
    assert!(outputs[0].1.contains("Process exited with code 0") && outputs[0].1.contains("err"));
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    let call_index = input
        .iter()
        .position(|i| i["type"] == "function_call" && i["call_id"] == "call_1");
    let output_index = input
        .iter()
        .position(|i| i["type"] == "function_call_output");
    assert!(call_index.is_some() && call_index < output_index);

    let lines = s.rollout();
    let history = rollout_response_items(&lines);
    assert!(history
        .iter()
        .any(|i| i["type"] == "function_call_output" && i["call_id"] == "call_1"));
    assert!(rollout_turn_items(&lines)
        .iter()
        .any(|i| i["type"] == "command_execution" && i["id"] == "call_1"));
}

#[tokio::test]
async fn end_turn_false_follows_up_with_another_request() {
    let first = ResponseBuilder::new("r1")
        .created()
        .text_message("msg_1", &["part one"])
        .completed(Usage::small(), Some(false))
        .build();
    let second = message_reply("r2", "msg_2", &["part two"]);
    let mut s = session(Script::new([first, second]), &[], json!({})).await;
    let turn = s.run_turn("go").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(end["items"][0]["id"], "msg_2");
    assert_eq!(end["items"][0]["text"], "part two");
    assert_eq!(params_of(&turn, "thread/tokenUsage/updated").len(), 2);
    let bodies = s.bodies(2).await;
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    assert_eq!(input.last().map(|i| i["id"].clone()), Some(json!("msg_1")));
}

#[tokio::test]
async fn a_call_that_cannot_run_gets_a_synthetic_output_and_a_follow_up() {
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_x", "no_such_tool", json!({}))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_2", &["sorry"]);
    let mut s = session(Script::new([first, second]), &[], json!({})).await;
    let turn = s.run_turn("go").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(2).await;
    assert_eq!(
        call_outputs(&bodies[1]),
        vec![(
            "call_x".to_string(),
            "unsupported call: no_such_tool".to_string()
        )]
    );
}

#[tokio::test]
async fn dynamic_tools_go_to_the_client_and_its_answers_become_outputs() {
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_ok", "lookup_ticket", json!({"id": "ABC-123"}))
        .function_call_json("fc_2", "call_bad", "lookup_ticket", json!({"id": "B"}))
        .function_call_json("fc_3", "call_err", "lookup_ticket", json!({"id": "C"}))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_2", &["ok"]);
    let tools = json!({"dynamicTools": [{"type": "function", "name": "lookup_ticket",
        "description": "Look up a ticket", "inputSchema": {"type": "object",
        "properties": {"id": {"type": "string"}}}}]});
    let mut s = session(Script::new([first, second]), &[], tools).await;
    s.start_turn("tickets", json!({})).await;
    let mut seen = Vec::new();
    let mut answered = 0;
    while answered < 3 {
        let message = s.daemon.next_message().await;
        seen.push(message.clone());
        if message["method"] != "item/tool/call" {
            continue;
        }
        answered += 1;
        let params = &message["params"];
        assert_eq!(params["tool"], "lookup_ticket");
        assert_eq!(params["threadId"], s.thread_id.as_str());
        match params["callId"].as_str() {
            Some("call_ok") => {
                assert_eq!(params["arguments"], json!({"id": "ABC-123"}));
                let result = json!({"contentItems": [{"type": "inputText", "text": "ticket is open"}], "success": true});
                s.answer(&message["id"], result).await;
            }
            Some("call_bad") => s.answer(&message["id"], json!({})).await,
            _ => {
                let error = json!({"id": message["id"], "error": {"code": -1, "message": "boom"}});
                s.daemon.send(error).await;
            }
        }
    }
    seen.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&seen, "completed");
    assert!(params_of(&seen, "serverRequest/resolved").is_empty());
    let completed = items_of(&seen, "item/completed", "dynamicToolCall");
    let by_id = |id: &str| {
        completed.iter().find(|item| item["id"] == id).map(|item| {
            (
                item["status"].clone(),
                item["success"].clone(),
                item["contentItems"].clone(),
            )
        })
    };
    assert_eq!(
        by_id("call_ok"),
        Some((
            json!("completed"),
            json!(true),
            json!([{"type": "inputText", "text": "ticket is open"}])
        ))
    );
    assert_eq!(
        by_id("call_bad"),
        Some((
            json!("failed"),
            json!(false),
            json!([{"type": "inputText", "text": "dynamic tool response was invalid"}])
        ))
    );
    assert_eq!(
        by_id("call_err"),
        Some((
            json!("failed"),
            json!(false),
            json!([{"type": "inputText", "text": "dynamic tool request failed"}])
        ))
    );
    let bodies = s.bodies(2).await;
    assert!(bodies[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["name"] == "lookup_ticket"
            && t["parameters"]["properties"]["id"]["type"] == "string"));
    assert_eq!(
        call_outputs(&bodies[1]),
        vec![
            ("call_ok".to_string(), "ticket is open".to_string()),
            (
                "call_bad".to_string(),
                "dynamic tool response was invalid".to_string()
            ),
            (
                "call_err".to_string(),
                "dynamic tool request failed".to_string()
            ),
        ]
    );
}

#[tokio::test]
async fn a_custom_tool_call_is_answered_with_a_custom_output_and_its_input_deltas_stay_with_it() {
    let custom = |b: ResponseBuilder| {
        b.output_item_added(json!({"type": "custom_tool_call", "id": "ctc_1",
            "call_id": "call_c", "name": "sketch_diagram", "input": ""}))
            .event(
                json!({"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1",
                "call_id": "call_c", "delta": "*** Begin"}),
            )
            // A delta naming another call is dropped, never spliced into this one.
            .event(
                json!({"type": "response.custom_tool_call_input.delta", "item_id": "ctc_9",
                "call_id": "call_other", "delta": "XX"}),
            )
            .output_item_done(json!({"type": "custom_tool_call", "id": "ctc_1",
                "call_id": "call_c", "name": "sketch_diagram", "input": "*** Begin"}))
    };
    let first = ResponseBuilder::new("r1")
        .created()
        .with(custom)
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_2", &["ok"]);
    let mut s = session(Script::new([first, second]), &[], json!({})).await;
    let turn = s.run_turn("patch").await;
    single_turn_end(&turn, "completed");
    assert!(params_of(&turn, "warning").is_empty(), "{turn:#?}");
    let bodies = s.bodies(2).await;
    let input = bodies[1]["input"].as_array().cloned().unwrap_or_default();
    let output = input
        .iter()
        .find(|item| item["type"] == "custom_tool_call_output")
        .cloned()
        .unwrap_or_default();
    assert_eq!(output["call_id"], "call_c");
    assert_eq!(
        output["output"],
        "unsupported custom tool call: sketch_diagram"
    );
}

#[tokio::test]
async fn an_output_schema_constrains_every_request_of_its_turn_and_no_later_turn() {
    let cwd = tempfile::tempdir().unwrap();
    let first = ResponseBuilder::new("r1")
        .created()
        .exec_call("fc_1", "call_1", json!({"cmd": "echo hi", "login": false}))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_1", &["{\"answer\":1}"]);
    let third = message_reply("r3", "msg_2", &["plain"]);
    let script = Script::new([first, second, third]);
    let mut s = session(script, &[], never_ask(cwd.path())).await;
    let schema = json!({"type": "object", "properties": {"answer": {"type": "integer"}},
        "required": ["answer"], "additionalProperties": false});
    s.start_turn("structured", json!({"outputSchema": schema}))
        .await;
    single_turn_end(&s.daemon.until_turn_completed().await, "completed");
    single_turn_end(&s.run_turn("free").await, "completed");
    let bodies = s.bodies(3).await;
    let expected = json!({"format": {"type": "json_schema", "strict": true,
        "name": "codex_output_schema", "schema": schema}});
    assert_eq!(bodies[0]["text"], expected);
    assert_eq!(bodies[1]["text"], expected);
    assert!(bodies[2].get("text").is_none(), "{}", bodies[2]);
}

/// A response whose `openai-model` header says the provider served another model.
fn rerouted(response: ResponseBuilder) -> Reply {
    let reply = response.completed(Usage::small(), None).into_reply();
    Reply::Sse(reply.with_header("openai-model", "rerouted-model"))
}

#[tokio::test]
async fn a_rerouted_model_is_announced_once_per_turn_not_once_per_request() {
    let cwd = tempfile::tempdir().unwrap();
    let call = |b: ResponseBuilder| {
        b.exec_call("fc_1", "call_1", json!({"cmd": "echo hi", "login": false}))
    };
    let script = Script::new([
        rerouted(ResponseBuilder::new("r1").created().with(call)),
        rerouted(
            ResponseBuilder::new("r2")
                .created()
                .text_message("msg_1", &["done"]),
        ),
        rerouted(
            ResponseBuilder::new("r3")
                .created()
                .text_message("msg_2", &["again"]),
        ),
    ]);
    let mut s = session(script, &[], never_ask(cwd.path())).await;
    let first = s.run_turn("go").await;
    single_turn_end(&first, "completed");
    assert_eq!(s.bodies(2).await.len(), 2);
    let reroutes = params_of(&first, "model/rerouted");
    assert_eq!(reroutes.len(), 1, "{first:?}");
    assert_eq!(reroutes[0]["toModel"], "rerouted-model");
    assert_eq!(params_of(&first, "warning").len(), 1, "{first:?}");
    // A new turn that is rerouted again is announced again.
    let second = s.run_turn("more").await;
    single_turn_end(&second, "completed");
    assert_eq!(params_of(&second, "model/rerouted").len(), 1);
}
