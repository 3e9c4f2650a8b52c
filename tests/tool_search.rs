//! `tool_search` through the real binary, with the test MCP server (tests/data/mcp_server.py):
//! a model offered it (gpt-5.5) gets no MCP namespace in its requests, finds a server's tool by
//! a search whose `tool_search_output` the next request replays, then calls the tool found,
//! which runs as an `mcpToolCall`; the search itself shows the client no item. A model without
//! it (gpt-5), or gpt-5.5 with the tool switched off, gets the namespace up front as before.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::mcp::server_overrides;
use support::*;
use turn_support::*;

/// A response whose one item is a `tool_search_call` with `arguments`.
fn search_reply(response_id: &str, call_id: &str, arguments: Value) -> Reply {
    let item = json!({"type": "tool_search_call", "id": format!("tsc_{call_id}"),
        "call_id": call_id, "execution": "client", "status": "completed", "arguments": arguments});
    ResponseBuilder::new(response_id)
        .created()
        .output_item_added(item.clone())
        .output_item_done(item)
        .completed(Usage::small(), None)
        .build()
}

/// A response whose one item calls `tool` in `namespace`.
fn call_reply(response_id: &str, call_id: &str, namespace: &str, tool: &str, args: Value) -> Reply {
    let item = json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
        "name": tool, "namespace": namespace, "arguments": args.to_string()});
    ResponseBuilder::new(response_id)
        .created()
        .output_item_added(item.clone())
        .output_item_done(item)
        .completed(Usage::small(), None)
        .build()
}

fn thread(model: &str) -> Value {
    json!({"approvalPolicy": "never", "model": model})
}

async fn mcp_session(script: Script, model: &str, extra: &[&str]) -> Session {
    let mut overrides = server_overrides("docs", &[]);
    overrides.extend(extra.iter().map(|o| o.to_string()));
    let overrides: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let mut s = session(script, &overrides, thread(model)).await;
    loop {
        let status = s
            .daemon
            .notification("mcpServer/startupStatus/updated")
            .await;
        if status["params"]["status"] == "ready" {
            break;
        }
        assert_ne!(status["params"]["status"], "failed", "{status}");
    }
    s
}

fn has_namespace(body: &Value, name: &str) -> bool {
    body["tools"].as_array().is_some_and(|tools| {
        tools
            .iter()
            .any(|t| t["type"] == "namespace" && t["name"] == name)
    })
}

fn input_of_type<'a>(body: &'a Value, kind: &str) -> Vec<&'a Value> {
    body["input"]
        .as_array()
        .map(|items| items.iter().filter(|i| i["type"] == kind).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_deferred_mcp_tool_is_found_by_tool_search_and_then_called() {
    let script = Script::new([
        search_reply(
            "r1",
            "call_search",
            json!({"query": "echo text back", "limit": 2}),
        ),
        call_reply(
            "r2",
            "call_echo",
            "mcp__docs",
            "echo",
            json!({"text": "found it"}),
        ),
        message_reply("r3", "msg_done", &["Done."]),
    ]);
    let mut s = mcp_session(script, "gpt-5.5", &[]).await;
    let turn = s.run_turn("use the echo tool").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(3).await;

    // Offered: tool_search and the resource helpers, not the server's namespace.
    let first = &bodies[0];
    let search = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "tool_search")
        .expect("tool_search offered");
    assert_eq!(search["execution"], "client");
    assert_eq!(search["parameters"]["required"], json!(["query"]));
    assert!(tool_names(first).contains(&"list_mcp_resources".to_string()));
    assert!(!has_namespace(first, "mcp__docs"), "{:#}", first["tools"]);

    // The search is answered in the next request's input, right after its call.
    let second = &bodies[1];
    assert_eq!(input_of_type(second, "tool_search_call").len(), 1);
    let outputs = input_of_type(second, "tool_search_output");
    assert_eq!(outputs.len(), 1, "{:#}", second["input"]);
    let output = outputs[0];
    assert_eq!(output["call_id"], "call_search");
    assert_eq!(output["status"], "completed");
    assert_eq!(output["execution"], "client");
    let found = output["tools"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["type"], "namespace");
    assert_eq!(found[0]["name"], "mcp__docs");
    let echo = &found[0]["tools"][0];
    assert_eq!(echo["type"], "function");
    assert_eq!(echo["name"], "echo");
    assert_eq!(echo["defer_loading"], true);
    assert_eq!(echo["parameters"]["required"], json!(["text"]));
    // Found tools are callable through the history; the request's tools stay as they were.
    assert!(!has_namespace(second, "mcp__docs"));

    // The tool found runs as an MCP call whose result the model reads next.
    let completed = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(completed.len(), 1, "{turn:#?}");
    assert_eq!(completed[0]["server"], "docs");
    assert_eq!(completed[0]["tool"], "echo");
    assert_eq!(completed[0]["status"], "completed");
    let outputs = call_outputs(&bodies[2]);
    assert!(
        outputs
            .iter()
            .any(|(id, text)| id == "call_echo" && text.contains("found it")),
        "{outputs:?}"
    );

    // The client sees no item for the search: only the message, the MCP call and the answer.
    let kinds: Vec<&str> = params_of(&turn, "item/started")
        .iter()
        .filter_map(|p| p["item"]["type"].as_str())
        .collect();
    assert_eq!(kinds, ["userMessage", "mcpToolCall", "agentMessage"]);
    // The search stays in the rollout, so a resumed thread replays it.
    let kept = rollout_response_items(&s.rollout());
    assert!(kept.iter().any(|i| i["type"] == "tool_search_output"));
}

#[tokio::test]
async fn a_search_without_a_query_or_matching_nothing_answers_an_empty_list() {
    let script = Script::new([
        search_reply("r1", "call_bad", json!({"limit": 3})),
        search_reply("r2", "call_none", json!({"query": "zzzz qqqq"})),
        message_reply("r3", "msg_done", &["Nothing."]),
    ]);
    let mut s = mcp_session(script, "gpt-5.5", &[]).await;
    single_turn_end(&s.run_turn("search").await, "completed");
    let bodies = s.bodies(3).await;
    let outputs = input_of_type(&bodies[2], "tool_search_output");
    let answers: Vec<(Value, Value)> = outputs
        .iter()
        .map(|o| (o["call_id"].clone(), o["tools"].clone()))
        .collect();
    assert_eq!(
        answers,
        [
            (json!("call_bad"), json!([])),
            (json!("call_none"), json!([]))
        ]
    );
}

#[tokio::test]
async fn models_without_tool_search_get_the_mcp_namespace_up_front() {
    for (model, extra) in [
        ("gpt-5", &[][..]),
        ("gpt-5.5", &["tools.tool_search.enabled=false"][..]),
    ] {
        let script = Script::new([message_reply("r1", "m1", &["ok"])]);
        let mut s = mcp_session(script, model, extra).await;
        single_turn_end(&s.run_turn("hi").await, "completed");
        let body = &s.bodies(1).await[0];
        assert!(
            has_namespace(body, "mcp__docs"),
            "{model}: {:#}",
            body["tools"]
        );
        assert!(
            !body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["type"] == "tool_search"),
            "{model}"
        );
    }
}

#[tokio::test]
async fn a_clients_deferred_tool_is_found_by_search_and_must_sit_in_a_namespace() {
    let script = Script::new([
        search_reply("r1", "call_search", json!({"query": "ticket"})),
        message_reply("r2", "msg_done", &["Found."]),
    ]);
    let tools = json!([{"type": "namespace", "name": "tickets", "description": "Tickets",
        "tools": [
            {"type": "function", "name": "close_ticket", "description": "Close a ticket",
             "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
             "deferLoading": true},
            {"type": "function", "name": "list_queues", "description": "List the queues",
             "inputSchema": {"type": "object", "properties": {}}}]}]);
    let mut s = session(
        script,
        &[],
        json!({"approvalPolicy": "never", "model": "gpt-5.5", "dynamicTools": tools}),
    )
    .await;
    single_turn_end(&s.run_turn("close it").await, "completed");
    let bodies = s.bodies(2).await;
    let offered = tool_names(&bodies[0]);
    assert!(offered.contains(&"list_queues".to_string()), "{offered:?}");
    assert!(
        !offered.contains(&"close_ticket".to_string()),
        "{offered:?}"
    );
    let outputs = input_of_type(&bodies[1], "tool_search_output");
    assert_eq!(outputs.len(), 1, "{:#}", bodies[1]["input"]);
    let found = &outputs[0]["tools"];
    assert_eq!(found[0]["type"], "namespace");
    assert_eq!(found[0]["name"], "tickets");
    let names: Vec<&Value> = found[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["name"])
        .collect();
    assert_eq!(names, [&json!("close_ticket")]);

    // A deferred tool outside a namespace could never be listed: thread/start refuses it.
    let refused = s
        .daemon
        .request(
            "thread/start",
            json!({"dynamicTools": [{"type": "function", "name": "lonely", "description": "d",
                "inputSchema": {"type": "object"}, "deferLoading": true}]}),
        )
        .await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("deferred dynamic tool must include a namespace: lonely"),
        "{refused}"
    );
}
