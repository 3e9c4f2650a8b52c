//! Sub-agents and MCP servers through the real binary (docs/TOOLS.md, docs/MCP.md): a child is
//! offered its parent's MCP tools, runs its own copy of each of its parent's servers (as the
//! reference does, one process per thread), calls a tool and gets the result on its own thread,
//! asks the client about that call under its own thread id, and closing it stops its copy while
//! the parent's server keeps answering. Servers from `config.toml` (here `-c`) and from the
//! parent's own `thread/start` `config` are both given to the child.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod subagent_support;
mod support;
mod turn_support;

use std::collections::HashMap;
use std::path::Path;

use openturn::mock_provider::{RecordedRequest, Responder};
use serde_json::{json, Value};
use subagent_support::{
    agent_call, item_text, last_input, message, namespaced_call, output_of, request_ending_with,
    CHILD_TASK,
};
use support::mcp::server_script;
use support::*;
use turn_support::*;

/// The server's name, and so the namespace its tools are offered in.
const SERVER: &str = "docs";
const MCP_NAMESPACE: &str = "mcp__docs";
const CHILD_ECHO: &str = "from the child";
const PARENT_ECHO: &str = "from the parent";

/// The agent id a spawn in `input` answered.
fn spawned_agent(input: &[Value]) -> Value {
    input
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == "call_spawn")
        .and_then(|item| serde_json::from_str::<Value>(item["output"].as_str()?).ok())
        .map(|output| output["agent_id"].clone())
        .unwrap_or_default()
}

/// The scripted model. The parent spawns a child with [`CHILD_TASK`], waits for it, closes
/// it, then calls the MCP tool itself; the child calls the MCP tool and answers.
fn model_reply(request: &RecordedRequest) -> Reply {
    let input = request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = last_input(request);
    if last["type"] == "function_call_output" {
        let echo = |call_id: &str, text: &str| {
            namespaced_call(MCP_NAMESPACE, call_id, "echo", &json!({"text": text}))
        };
        let agent = spawned_agent(&input);
        return match last["call_id"].as_str().unwrap_or_default() {
            "call_spawn" => agent_call(
                "call_wait",
                "wait_agent",
                &json!({"targets": [agent], "timeout_ms": 600000}),
            ),
            "call_wait" => agent_call("call_close", "close_agent", &json!({"target": agent})),
            "call_close" => echo("call_parent_echo", PARENT_ECHO),
            "call_child_echo" => message("child done"),
            _ => message("parent done"),
        };
    }
    let text = item_text(&last);
    if text.contains(CHILD_TASK) {
        let arguments = json!({"text": CHILD_ECHO});
        return namespaced_call(MCP_NAMESPACE, "call_child_echo", "echo", &arguments);
    }
    if text.contains("DELEGATE") {
        return agent_call("call_spawn", "spawn_agent", &json!({"message": CHILD_TASK}));
    }
    message("ok")
}

fn script() -> Script {
    Script::answering(Responder::new(model_reply))
}

fn thread_params(approval: &str) -> Value {
    json!({"approvalPolicy": approval, "sandbox": "read-only", "model": "gpt-5",
        "cwd": std::env::temp_dir().display().to_string()})
}

/// The stdio server's table, as `thread/start`'s `config` gives it; its processes write their
/// pids into `pid_dir`.
fn server_table(pid_dir: &Path) -> Value {
    json!({"command": "python3", "args": [server_script()],
        "env": {"MCP_TEST_PID_DIR": pid_dir.display().to_string()}})
}

/// The same server as `-c` overrides (what `config.toml` would say).
fn config_overrides(pid_dir: &Path) -> Vec<String> {
    let mut overrides = support::mcp::server_overrides(SERVER, &[]);
    overrides.push(format!(
        "mcp_servers.{SERVER}.env.MCP_TEST_PID_DIR={}",
        json!(pid_dir.display().to_string())
    ));
    overrides
}

fn pids_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Runs the `DELEGATE` turn until the parent's turn and every child turn ended, accepting each
/// MCP elicitation on the way; returns every message and the elicitations, in order.
async fn delegate(s: &mut Session) -> (Vec<Value>, Vec<Value>) {
    s.start_turn("DELEGATE the echo", json!({})).await;
    let parent = s.thread_id.clone();
    let mut open: HashMap<String, i32> = HashMap::new();
    let mut parent_done = false;
    let mut messages = Vec::new();
    let mut elicitations = Vec::new();
    while !(parent_done && open.values().all(|turns| *turns == 0)) {
        let next = s.daemon.next_message().await;
        let thread = next["params"]["threadId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match next["method"].as_str() {
            Some("turn/started") if thread != parent => *open.entry(thread).or_default() += 1,
            Some("turn/completed") if thread == parent => parent_done = true,
            Some("turn/completed") => *open.entry(thread).or_default() -= 1,
            Some("mcpServer/elicitation/request") => {
                s.answer(&next["id"], json!({"action": "accept", "content": {}}))
                    .await;
                elicitations.push(next.clone());
            }
            _ => {}
        }
        messages.push(next);
    }
    (messages, elicitations)
}

/// The one `thread/started` of a child in `messages`: its id.
fn child_id(messages: &[Value]) -> String {
    let started = params_of(messages, "thread/started");
    assert_eq!(started.len(), 1, "{messages:#?}");
    started[0]["thread"]["id"].as_str().unwrap().to_string()
}

/// The completed `mcpToolCall` item of `call_id`, with the thread it was reported on.
fn mcp_call<'a>(messages: &'a [Value], call_id: &str) -> &'a Value {
    params_of(messages, "item/completed")
        .into_iter()
        .find(|p| p["item"]["type"] == "mcpToolCall" && p["item"]["id"] == call_id)
        .unwrap_or_else(|| panic!("no mcpToolCall {call_id}: {messages:#?}"))
}

/// The tools a request offers, by name.
fn tools_by_name(body: &Value) -> HashMap<String, Value> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| Some((tool["name"].as_str()?.to_string(), tool.clone())))
        .collect()
}

/// What both tests check of the child's MCP tools: it is offered them as its parent is, its
/// call runs on its own thread and reaches the model, and the parent's call after the close
/// still works.
fn assert_child_used_its_parents_tools(s: &Session, messages: &[Value], child: &str) {
    let requests = s.provider.requests();
    let parent_tools = tools_by_name(&request_ending_with(&requests, "DELEGATE").body);
    let child_tools = tools_by_name(&request_ending_with(&requests, CHILD_TASK).body);
    for name in [
        MCP_NAMESPACE,
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        assert!(child_tools.contains_key(name), "the child lacks {name}");
        assert_eq!(child_tools[name], parent_tools[name], "{name} differs");
    }

    let child_call = mcp_call(messages, "call_child_echo");
    assert_eq!(child_call["threadId"], child);
    assert_eq!(child_call["item"]["status"], "completed", "{child_call}");
    assert_eq!(child_call["item"]["server"], SERVER);
    assert_eq!(
        child_call["item"]["result"]["content"],
        json!([{"type": "text", "text": CHILD_ECHO}])
    );
    let output = output_of(&requests, "call_child_echo").to_string();
    assert!(output.contains(CHILD_ECHO), "{output}");

    // The child announced its own copy of the server, under its own id.
    let child_statuses: Vec<&Value> = params_of(messages, "mcpServer/startupStatus/updated")
        .into_iter()
        .filter(|p| p["threadId"] == child)
        .map(|p| &p["status"])
        .collect();
    assert_eq!(child_statuses, [&json!("starting"), &json!("ready")]);

    // Closed before it, the child took nothing of the parent's server with it.
    let parent_call = mcp_call(messages, "call_parent_echo");
    assert_eq!(parent_call["threadId"], s.thread_id.as_str());
    assert_eq!(parent_call["item"]["status"], "completed", "{parent_call}");
    assert_eq!(
        parent_call["item"]["result"]["content"],
        json!([{"type": "text", "text": PARENT_ECHO}])
    );
    let unloaded = params_of(messages, "thread/status/changed")
        .into_iter()
        .any(|p| p["threadId"] == child && p["status"]["type"] == "notLoaded");
    assert!(unloaded, "the child was not closed: {messages:#?}");
}

/// Two server processes were started, one per thread, and only the parent's still runs.
async fn assert_one_copy_per_thread_and_the_childs_stopped(pid_dir: &Path) {
    let pids = pids_in(pid_dir);
    assert_eq!(pids.len(), 2, "{pids:?}");
    let one_left =
        poll_until(|| pids.iter().filter(|pid| !process_is_dead(pid)).count() == 1).await;
    assert!(
        one_left,
        "expected only the parent's server to run: {pids:?}"
    );
}

#[tokio::test]
async fn a_child_runs_its_own_copy_of_its_parents_mcp_server_and_closing_it_leaves_the_parents() {
    let pid_dir = tempfile::tempdir().unwrap();
    let overrides = config_overrides(pid_dir.path());
    let extra: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let mut s = session(script(), &extra, thread_params("on-request")).await;
    let (messages, elicitations) = delegate(&mut s).await;
    let child = child_id(&messages);

    assert_child_used_its_parents_tools(&s, &messages, &child);
    // Each call was put to the user under the thread that made it, the child's first.
    let asked: Vec<(Value, Value)> = elicitations
        .iter()
        .map(|e| {
            assert_eq!(e["params"]["_meta"]["codex_approval_kind"], "mcp_tool_call");
            assert_eq!(e["params"]["serverName"], SERVER);
            let text = e["params"]["_meta"]["tool_params"]["text"].clone();
            (e["params"]["threadId"].clone(), text)
        })
        .collect();
    assert_eq!(
        asked,
        [
            (json!(child), json!(CHILD_ECHO)),
            (json!(s.thread_id), json!(PARENT_ECHO))
        ]
    );
    assert_one_copy_per_thread_and_the_childs_stopped(pid_dir.path()).await;
}

#[tokio::test]
async fn a_server_from_the_parents_own_thread_config_is_given_to_the_child_too() {
    let pid_dir = tempfile::tempdir().unwrap();
    let mut params = thread_params("never");
    params["config"] = json!({"mcp_servers": {SERVER: server_table(pid_dir.path())}});
    let mut s = session(script(), &[], params).await;
    let (messages, elicitations) = delegate(&mut s).await;
    let child = child_id(&messages);

    assert_child_used_its_parents_tools(&s, &messages, &child);
    assert!(elicitations.is_empty(), "{elicitations:#?}");
    assert_one_copy_per_thread_and_the_childs_stopped(pid_dir.path()).await;
}
