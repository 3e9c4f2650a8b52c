//! MCP servers through the real binary: a small stdio server (tests/data/mcp_server.py, python3
//! standard library only) is started per thread; its tools reach the model as a namespace, a
//! call becomes an `mcpToolCall` item whose result the follow-up request carries under the same
//! call id; a server that dies at start is reported and the thread works without it; the status
//! list pages and filters; the tool timeout holds; servers given in `thread/start`'s `config`
//! belong to that thread only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::mcp::{server_overrides, server_script};
use support::*;
use turn_support::*;

/// A function call of `tool` in `namespace`, as added + done.
fn namespaced_call(
    response: ResponseBuilder,
    item_id: &str,
    call_id: &str,
    namespace: &str,
    tool: &str,
    args: Value,
) -> ResponseBuilder {
    let arguments = args.to_string();
    let item = |arguments: &str| {
        json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": tool,
               "namespace": namespace, "arguments": arguments})
    };
    response
        .output_item_added(item(""))
        .output_item_done(item(&arguments))
}

/// A response whose one item is a call of `tool` in `namespace`.
fn namespaced_call_reply(
    response_id: &str,
    item_id: &str,
    call_id: &str,
    namespace: &str,
    tool: &str,
    args: Value,
) -> Reply {
    ResponseBuilder::new(response_id)
        .created()
        .with(|b| namespaced_call(b, item_id, call_id, namespace, tool, args))
        .completed(Usage::small(), None)
        .build()
}

fn never() -> Value {
    json!({"approvalPolicy": "never"})
}

async fn mcp_session(script: Script, overrides: &[String], thread: Value) -> Session {
    let extra: Vec<&str> = overrides.iter().map(String::as_str).collect();
    session(script, &extra, thread).await
}

/// Startup statuses of the session's thread until every named server settled.
async fn settled_statuses(s: &mut Session, servers: &[&str]) -> Vec<Value> {
    let mut statuses = Vec::new();
    let settled = |statuses: &[Value], name: &str| {
        statuses
            .iter()
            .any(|p| p["name"] == name && (p["status"] == "ready" || p["status"] == "failed"))
    };
    while !servers.iter().all(|name| settled(&statuses, name)) {
        let message = s
            .daemon
            .notification("mcpServer/startupStatus/updated")
            .await;
        statuses.push(message["params"].clone());
    }
    statuses
}

fn namespace<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|tool| tool["type"] == "namespace" && tool["name"] == name)
}

#[tokio::test]
async fn an_mcp_tool_the_model_calls_runs_and_its_result_reaches_the_follow_up_request() {
    let first = namespaced_call_reply(
        "r1",
        "fc_1",
        "call_echo",
        "mcp__docs",
        "echo",
        json!({"text": "hello mcp"}),
    );
    let second = message_reply("r2", "msg_f", &["Echoed."]);
    let mut s = mcp_session(
        Script::new([first, second]),
        &server_overrides("docs", &[]),
        never(),
    )
    .await;
    let statuses = settled_statuses(&mut s, &["docs"]).await;
    assert_eq!(statuses[0]["status"], "starting");
    assert_eq!(statuses[0]["threadId"], s.thread_id.as_str());
    assert_eq!(
        statuses.last().map(|p| p["status"].clone()),
        Some(json!("ready"))
    );

    let turn = s.run_turn("echo something").await;
    single_turn_end(&turn, "completed");
    let started = items_of(&turn, "item/started", "mcpToolCall");
    assert_eq!(started.len(), 1, "{turn:#?}");
    assert_eq!(started[0]["id"], "call_echo");
    assert_eq!(started[0]["server"], "docs");
    assert_eq!(started[0]["tool"], "echo");
    assert_eq!(started[0]["status"], "inProgress");
    assert_eq!(started[0]["arguments"], json!({"text": "hello mcp"}));
    let completed = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(completed[0]["status"], "completed");
    assert_eq!(
        completed[0]["result"]["content"],
        json!([{"type": "text", "text": "hello mcp"}])
    );
    assert_eq!(
        completed[0]["result"]["structuredContent"],
        json!({"echoed": "hello mcp"})
    );
    assert!(completed[0]["durationMs"].as_i64().is_some());
    assert_eq!(completed[0]["error"], Value::Null);

    let bodies = s.bodies(2).await;
    // The server's tools, as a namespace of functions with the server's own input schemas, and
    // the resource helpers beside them.
    let docs =
        namespace(&bodies[0], "mcp__docs").unwrap_or_else(|| panic!("{:#}", bodies[0]["tools"]));
    let echo = docs["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "echo")
        .cloned()
        .unwrap_or_default();
    assert_eq!(echo["type"], "function");
    assert_eq!(echo["description"], "Echo the given text back.");
    assert_eq!(echo["parameters"]["required"], json!(["text"]));
    let names = tool_names(&bodies[0]);
    for helper in [
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        assert!(names.iter().any(|n| n == helper), "{names:?}");
    }
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].0, "call_echo");
    assert!(
        outputs[0].1.contains("{\"echoed\":\"hello mcp\"}"),
        "{}",
        outputs[0].1
    );
    // The call goes back in history with its namespace, as the model made it.
    let call = bodies[1]["input"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["type"] == "function_call")
        .cloned()
        .unwrap_or_default();
    assert_eq!(call["namespace"], "mcp__docs");

    // The item is part of the stored turn, as the client saw it.
    let read = s
        .daemon
        .ok(
            "thread/read",
            json!({"threadId": s.thread_id, "includeTurns": true}),
        )
        .await;
    let stored: Vec<Value> = read["thread"]["turns"][0]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "mcpToolCall")
        .cloned()
        .collect();
    assert_eq!(stored.len(), 1, "{read:#}");
    assert_eq!(stored[0]["result"], completed[0]["result"]);
    let lines = s.rollout();
    assert!(rollout_turn_items(&lines)
        .iter()
        .any(|i| i["type"] == "mcp_tool_call"
            && i["id"] == "call_echo"
            && i["status"] == "completed"));
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_reported_failed_and_the_turn_still_works() {
    let reply = message_reply("r1", "msg_1", &["fine without it"]);
    let mut overrides = server_overrides("dead", &["exit-now"]);
    overrides.extend(server_overrides("alive", &[]));
    let mut s = mcp_session(Script::new([reply]), &overrides, never()).await;
    let statuses = settled_statuses(&mut s, &["dead", "alive"]).await;
    let failed = statuses
        .iter()
        .find(|p| p["name"] == "dead" && p["status"] == "failed")
        .cloned()
        .unwrap_or_else(|| panic!("{statuses:#?}"));
    assert!(
        failed["error"].as_str().is_some_and(|e| !e.is_empty()),
        "a failure says why: {failed}"
    );
    let turn = s.run_turn("hi").await;
    let end = single_turn_end(&turn, "completed");
    assert_eq!(end["items"][0]["text"], "fine without it");
    let bodies = s.bodies(1).await;
    assert!(namespace(&bodies[0], "mcp__dead").is_none());
    assert!(namespace(&bodies[0], "mcp__alive").is_some());

    let listed = s
        .daemon
        .ok("mcpServerStatus/list", json!({"threadId": s.thread_id}))
        .await;
    let dead = &listed["data"][1];
    assert_eq!(dead["name"], "dead");
    assert_eq!(dead["runtimeStatus"], "failed");
    assert_eq!(dead["toolsError"], failed["error"]);
    assert_eq!(dead["tools"], json!({}));
}

#[tokio::test]
async fn the_status_list_shows_tools_with_schemas_pages_and_filters_by_name() {
    let mut overrides = server_overrides("alpha", &[]);
    overrides.extend(server_overrides("beta", &[]));
    let mut s = mcp_session(Script::new([]), &overrides, never()).await;
    settled_statuses(&mut s, &["alpha", "beta"]).await;
    let thread_id = s.thread_id.clone();

    let first = s
        .daemon
        .ok(
            "mcpServerStatus/list",
            json!({"threadId": thread_id, "limit": 1}),
        )
        .await;
    assert_eq!(first["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(first["data"][0]["name"], "alpha");
    assert_eq!(first["data"][0]["runtimeStatus"], "connected");
    assert_eq!(first["data"][0]["authStatus"], "unsupported");
    assert_eq!(
        first["data"][0]["serverInfo"]["name"],
        "openturn-test-server"
    );
    assert_eq!(
        first["data"][0]["tools"]["add"]["inputSchema"]["required"],
        json!(["a", "b"])
    );
    assert_eq!(first["data"][0]["resources"][0]["uri"], "test://greeting");
    assert_eq!(
        first["data"][0]["resourceTemplates"][0]["uriTemplate"],
        "test://item/{id}"
    );
    let cursor = first["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");
    let second = s
        .daemon
        .ok(
            "mcpServerStatus/list",
            json!({"threadId": thread_id, "limit": 1, "cursor": cursor}),
        )
        .await;
    assert_eq!(second["data"][0]["name"], "beta");
    assert_eq!(second["nextCursor"], Value::Null);

    let filtered = s
        .daemon
        .ok(
            "mcpServerStatus/list",
            json!({"threadId": thread_id, "serverName": "beta"}),
        )
        .await;
    let names: Vec<Value> = filtered["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| entry["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("beta")]);
    // Without a thread: the configured servers, with a loaded thread's view of them.
    let configured = s.daemon.ok("mcpServerStatus/list", json!({})).await;
    assert_eq!(configured["data"].as_array().map(Vec::len), Some(2));
    assert_eq!(configured["data"][1]["runtimeStatus"], "connected");
}

#[tokio::test]
async fn a_call_past_the_tool_timeout_fails_its_item_and_the_model_hears_why() {
    let first = namespaced_call_reply(
        "r1",
        "fc_1",
        "call_slow",
        "mcp__slowpoke",
        "slow",
        json!({"seconds": 10}),
    );
    let second = message_reply("r2", "msg_f", &["It timed out."]);
    let mut overrides = server_overrides("slowpoke", &[]);
    overrides.push("mcp_servers.slowpoke.tool_timeout_sec=0.5".to_string());
    let mut s = mcp_session(Script::new([first, second]), &overrides, never()).await;
    settled_statuses(&mut s, &["slowpoke"]).await;
    let clock = Instant::now();
    let turn = s.run_turn("be slow").await;
    single_turn_end(&turn, "completed");
    assert!(
        clock.elapsed() < Duration::from_secs(8),
        "the turn waited for the tool instead of its timeout: {:?}",
        clock.elapsed()
    );
    let completed = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(completed[0]["status"], "failed");
    let error = completed[0]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(error.contains("timed out after 0.5 s"), "{error}");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs[0].0, "call_slow");
    assert!(outputs[0].1.contains("timed out"), "{}", outputs[0].1);
}

#[tokio::test]
async fn servers_from_thread_start_config_serve_that_thread_only() {
    let first = namespaced_call_reply(
        "r1",
        "fc_1",
        "call_add",
        "mcp__calc",
        "add",
        json!({"a": 2, "b": 40}),
    );
    let second = message_reply("r2", "msg_f", &["42."]);
    let config =
        json!({"mcp_servers": {"calc": {"command": "python3", "args": [server_script()]}}});
    let mut s = session(
        Script::new([first, second]),
        &[],
        json!({"approvalPolicy": "never", "config": config}),
    )
    .await;
    settled_statuses(&mut s, &["calc"]).await;
    let turn = s.run_turn("add them").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs[0].0, "call_add");
    assert!(outputs[0].1.ends_with("Output:\n42"), "{}", outputs[0].1);

    // Another thread, started without that config, has no server.
    let other = s.daemon.start_thread(json!({})).await;
    let listed = s
        .daemon
        .ok("mcpServerStatus/list", json!({"threadId": other}))
        .await;
    assert_eq!(listed["data"], json!([]));
    let own = s
        .daemon
        .ok("mcpServerStatus/list", json!({"threadId": s.thread_id}))
        .await;
    assert_eq!(own["data"][0]["name"], "calc");
}

#[tokio::test]
async fn progress_notes_and_a_servers_elicitation_reach_the_client() {
    let first = ResponseBuilder::new("r1")
        .created()
        .with(|b| {
            namespaced_call(
                b,
                "fc_1",
                "call_progress",
                "mcp__docs",
                "progress",
                json!({}),
            )
        })
        .with(|b| namespaced_call(b, "fc_2", "call_ask", "mcp__docs", "ask", json!({})))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Blue it is."]);
    let mut s = mcp_session(
        Script::new([first, second]),
        &server_overrides("docs", &[]),
        never(),
    )
    .await;
    settled_statuses(&mut s, &["docs"]).await;
    s.start_turn("go", json!({})).await;
    let request = s
        .daemon
        .collect_until(|m| m["method"] == "mcpServer/elicitation/request")
        .await;
    let ask = request.last().cloned().unwrap_or_default();
    assert_eq!(ask["params"]["serverName"], "docs");
    assert_eq!(ask["params"]["threadId"], s.thread_id.as_str());
    assert_eq!(ask["params"]["mode"], "form");
    assert_eq!(ask["params"]["message"], "Pick a colour");
    s.answer(
        &ask["id"],
        json!({"action": "accept", "content": {"colour": "blue"}}),
    )
    .await;
    let mut turn = request;
    turn.extend(s.daemon.until_turn_completed().await);
    let progress = params_of(&turn, "item/mcpToolCall/progress");
    let messages: Vec<&Value> = progress.iter().map(|p| &p["message"]).collect();
    assert_eq!(
        messages,
        vec![&json!("step 1"), &json!("step 2")],
        "{turn:#?}"
    );
    assert!(progress.iter().all(|p| p["itemId"] == "call_progress"));
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    let asked = outputs
        .iter()
        .find(|(id, _)| id == "call_ask")
        .map(|(_, text)| text.clone())
        .unwrap_or_default();
    assert!(
        asked.contains("\\\"colour\\\": \\\"blue\\\"") || asked.contains("blue"),
        "{asked}"
    );
}

#[tokio::test]
async fn an_on_request_thread_asks_before_a_tool_runs_and_a_decline_stops_it() {
    let first = namespaced_call_reply(
        "r1",
        "fc_1",
        "call_echo",
        "mcp__docs",
        "echo",
        json!({"text": "x"}),
    );
    let second = message_reply("r2", "msg_f", &["Declined."]);
    let mut s = mcp_session(
        Script::new([first, second]),
        &server_overrides("docs", &[]),
        json!({"approvalPolicy": "on-request"}),
    )
    .await;
    settled_statuses(&mut s, &["docs"]).await;
    s.start_turn("go", json!({})).await;
    let before = s
        .daemon
        .collect_until(|m| m["method"] == "mcpServer/elicitation/request")
        .await;
    let ask = before.last().cloned().unwrap_or_default();
    // While the question is open the thread shows it waits on the user.
    assert!(before.iter().any(|m| m["method"] == "thread/status/changed"
        && m["params"]["status"]["activeFlags"] == json!(["waitingOnApproval"])));
    assert_eq!(
        ask["params"]["_meta"]["codex_approval_kind"],
        "mcp_tool_call"
    );
    assert_eq!(ask["params"]["_meta"]["tool_name"], "echo");
    s.answer(&ask["id"], json!({"action": "decline"})).await;
    let turn = s.daemon.until_turn_completed().await;
    let completed = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(completed[0]["status"], "failed");
    assert!(completed[0]["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("declined")));
    let bodies = s.bodies(2).await;
    assert!(call_outputs(&bodies[1])[0].1.contains("declined"));
}

#[tokio::test]
async fn the_first_request_waits_for_a_server_still_starting() {
    let reply = message_reply("r1", "msg_1", &["ok"]);
    let mut s = mcp_session(
        Script::new([reply]),
        &server_overrides("late", &["sleep-start", "1.5"]),
        never(),
    )
    .await;
    // The turn starts while the server is still in its handshake.
    let turn = s.run_turn("hi").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(1).await;
    assert!(
        namespace(&bodies[0], "mcp__late").is_some(),
        "the request went out without the starting server's tools: {:#}",
        bodies[0]["tools"]
    );
}

#[tokio::test]
async fn a_server_that_dies_mid_thread_is_reported_and_its_call_fails() {
    let first = namespaced_call_reply("r1", "fc_1", "call_die", "mcp__fragile", "die", json!({}));
    let second = message_reply("r2", "msg_2", &["It died."]);
    let third = message_reply("r3", "msg_3", &["Still here."]);
    let mut s = mcp_session(
        Script::new([first, second, third]),
        &server_overrides("fragile", &[]),
        never(),
    )
    .await;
    settled_statuses(&mut s, &["fragile"]).await;
    let turn = s.run_turn("kill it").await;
    single_turn_end(&turn, "completed");
    let completed = items_of(&turn, "item/completed", "mcpToolCall");
    assert_eq!(completed[0]["status"], "failed");
    assert!(completed[0]["error"]["message"].is_string());
    // The death is reported (it may come during or after the turn).
    let mut statuses: Vec<Value> = params_of(&turn, "mcpServer/startupStatus/updated")
        .into_iter()
        .cloned()
        .collect();
    while !statuses.iter().any(|p| p["status"] == "failed") {
        let message = s
            .daemon
            .notification("mcpServer/startupStatus/updated")
            .await;
        statuses.push(message["params"].clone());
    }
    let died = statuses
        .iter()
        .find(|p| p["status"] == "failed")
        .cloned()
        .unwrap_or_default();
    assert_eq!(died["name"], "fragile");
    assert_eq!(died["error"], "the server exited");
    // The thread keeps working without it, and no longer offers its tools.
    let next = s.run_turn("again").await;
    single_turn_end(&next, "completed");
    let bodies = s.bodies(3).await;
    assert!(namespace(&bodies[2], "mcp__fragile").is_none());
}

#[tokio::test]
async fn a_server_without_command_or_url_in_thread_start_config_is_refused_by_name() {
    let mut s = session(Script::new([]), &[], json!({})).await;
    let error = s
        .daemon
        .err(
            "thread/start",
            json!({"config": {"mcp_servers": {"broken": {"args": ["x"]}}}}),
        )
        .await;
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`mcp_servers.broken` needs `command`"),
        "{error}"
    );
    let typed = s
        .daemon
        .err(
            "thread/start",
            json!({"config": {"mcp_servers": {"docs": {"command": "x", "tool_timeout_sec": "soon"}}}}),
        )
        .await;
    assert!(
        typed["message"]
            .as_str()
            .is_some_and(|m| m.contains("`mcp_servers.docs.tool_timeout_sec`")),
        "{typed}"
    );
}
