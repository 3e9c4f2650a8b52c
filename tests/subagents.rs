//! Sub-agents through the real binary (`multi_agent_v1`, docs/TOOLS.md): a scripted parent
//! spawns a child, the child's own turn runs against the same mock provider, the parent waits
//! for it and gets its answer, and the parent's next request carries the child's
//! `<subagent_notification>`. Then closing, resuming and sending input, unknown agents,
//! `thread/list`'s `sourceKinds`, and both threads read back the same after a restart.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod subagent_support;
mod support;
mod turn_support;

use std::cell::Cell;

use serde_json::{json, Value};
use subagent_support::*;
use support::*;
use turn_support::*;

fn thread_params() -> Value {
    json!({"approvalPolicy": "never", "sandbox": "read-only", "model": "gpt-5",
        "cwd": std::env::temp_dir().display().to_string()})
}

/// Runs a parent turn on `text` until the parent's turn and every child turn it started ended;
/// returns every message.
async fn parent_turn(s: &mut Session, text: &str) -> Vec<Value> {
    s.start_turn(text, json!({})).await;
    let parent = s.thread_id.clone();
    let open = Cell::new(0i32);
    let parent_done = Cell::new(false);
    s.daemon
        .collect_until(|m| {
            let in_child = m["params"]["threadId"] != parent.as_str();
            match m["method"].as_str() {
                Some("turn/started") if in_child => open.set(open.get() + 1),
                Some("turn/completed") if in_child => open.set(open.get() - 1),
                Some("turn/completed") => parent_done.set(true),
                _ => {}
            }
            parent_done.get() && open.get() == 0
        })
        .await
}

/// The params of the `item/completed` notifications of `item_type` items.
fn completed(messages: &[Value], item_type: &str) -> Vec<Value> {
    params_of(messages, "item/completed")
        .into_iter()
        .filter(|p| p["item"]["type"] == item_type)
        .cloned()
        .collect()
}

/// The `collabAgentToolCall` items completed in `messages`.
fn collab_items(messages: &[Value]) -> Vec<Value> {
    completed(messages, "collabAgentToolCall")
}

/// Spawns one child and waits for it; returns the child's id and the turn's messages.
async fn delegate(s: &mut Session) -> (String, Vec<Value>) {
    let messages = parent_turn(s, "DELEGATE the question").await;
    let started: Vec<&Value> = params_of(&messages, "thread/started");
    assert_eq!(started.len(), 1, "{messages:#?}");
    let child = started[0]["thread"]["id"].as_str().unwrap().to_string();
    (child, messages)
}

#[tokio::test]
async fn a_parent_spawns_a_child_waits_for_its_answer_and_is_told_it_finished() {
    let mut s = session(script(), &[], thread_params()).await;
    let parent = s.thread_id.clone();
    let (child, messages) = delegate(&mut s).await;

    // The child is a thread of its own, announced with its origin.
    let started = params_of(&messages, "thread/started")[0]["thread"].clone();
    assert_eq!(started["parentThreadId"], parent.as_str());
    assert_eq!(started["threadSource"], "subagent");
    let spawn = &started["source"]["subAgent"]["thread_spawn"];
    assert_eq!(spawn["parent_thread_id"], parent.as_str());
    assert_eq!(spawn["depth"], 1);
    let nickname = started["agentNickname"].as_str().unwrap().to_string();
    assert_eq!(spawn["agent_nickname"], nickname.as_str());

    // Its turn and items go out under its own id.
    let child_turns: Vec<&Value> = params_of(&messages, "turn/started")
        .into_iter()
        .filter(|p| p["threadId"] == child.as_str())
        .collect();
    assert_eq!(child_turns.len(), 1);
    let parent_turn_id = params_of(&messages, "turn/started")
        .into_iter()
        .find(|p| p["threadId"] == parent.as_str())
        .unwrap()["turn"]["id"]
        .clone();
    assert_eq!(child_turns[0]["turn"]["rootTurnId"], parent_turn_id);
    assert_ne!(child_turns[0]["turn"]["id"], parent_turn_id);
    let child_answer = completed(&messages, "agentMessage")
        .into_iter()
        .find(|p| p["threadId"] == child.as_str())
        .unwrap_or_else(|| panic!("{messages:#?}"));
    assert_eq!(child_answer["item"]["text"], CHILD_ANSWER);

    // The parent's turn shows one item per call: the spawn, then the wait with the answer.
    let items = collab_items(&messages);
    let tools: Vec<&str> = items
        .iter()
        .map(|p| p["item"]["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["spawnAgent", "wait"]);
    for item in &items {
        assert_eq!(item["threadId"], parent.as_str());
        assert_eq!(item["item"]["senderThreadId"], parent.as_str());
        assert_eq!(item["item"]["receiverThreadIds"], json!([child]));
        assert_eq!(item["item"]["status"], "completed");
    }
    assert_eq!(items[0]["item"]["prompt"], CHILD_TASK);
    assert_eq!(
        items[1]["item"]["agentsStates"][&child],
        json!({"status": "completed", "message": CHILD_ANSWER})
    );

    let requests = s.provider.requests();
    // The spawn answered the id and nickname; the wait, the child's last message.
    let spawned = output_of(&requests, "call_spawn");
    assert_eq!(spawned, json!({"agent_id": child, "nickname": nickname}));
    let waited = output_of(&requests, "call_wait");
    assert_eq!(
        waited,
        json!({"status": {&child: {"completed": CHILD_ANSWER}}, "timed_out": false})
    );
    // The child got the task alone, and no sub-agent tools of its own.
    let child_request = request_ending_with(&requests, CHILD_TASK);
    assert!(!user_texts(&child_request.body)
        .iter()
        .any(|text| text.contains("DELEGATE")));
    assert!(!child_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|tool| tool["name"] == NAMESPACE));
    let parent_request = request_ending_with(&requests, "DELEGATE");
    assert!(parent_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|tool| tool["name"] == NAMESPACE));

    // No parent turn started for the notification; the next one carries it to the model.
    let turns_of_parent = params_of(&messages, "turn/started")
        .into_iter()
        .filter(|p| p["threadId"] == parent.as_str())
        .count();
    assert_eq!(turns_of_parent, 1);
    parent_turn(&mut s, "what did it say?").await;
    let requests = s.provider.requests();
    let next = request_ending_with(&requests, "what did it say?");
    let notification = user_texts(&next.body)
        .into_iter()
        .find(|text| text.starts_with("<subagent_notification>"))
        .expect("the notification reaches the next request");
    let body = notification
        .trim_start_matches("<subagent_notification>")
        .trim_end_matches("</subagent_notification>");
    let body: Value = serde_json::from_str(body.trim()).unwrap();
    assert_eq!(
        body,
        json!({"agent_path": child, "status": {"completed": CHILD_ANSWER}})
    );
}

#[tokio::test]
async fn a_closed_agent_is_not_found_until_resumed_from_disk_and_then_takes_input() {
    let mut s = session(script(), &[], thread_params()).await;
    let (child, _) = delegate(&mut s).await;

    let call = |tool: &str, arguments: Value| format!("CALL {tool} {arguments}");
    let messages = parent_turn(&mut s, &call("close_agent", json!({"target": child}))).await;
    let requests = s.provider.requests();
    assert_eq!(
        output_of(&requests, "call_close_agent"),
        json!({"previous_status": {"completed": CHILD_ANSWER}})
    );
    let unloaded = params_of(&messages, "thread/status/changed")
        .into_iter()
        .any(|p| p["threadId"] == child.as_str() && p["status"]["type"] == "notLoaded");
    assert!(unloaded, "{messages:#?}");
    let loaded = s.daemon.ok("thread/loaded/list", json!({})).await;
    assert!(!loaded["data"].as_array().unwrap().contains(&json!(child)));

    // Closed and unknown agents are not found, at once.
    let unknown = "00000000-0000-4000-8000-000000000000";
    let targets = json!({"targets": [child, unknown], "timeout_ms": 600000});
    parent_turn(&mut s, &call("wait_agent", targets)).await;
    assert_eq!(
        output_of(&s.provider.requests(), "call_wait_agent"),
        json!({"status": {&child: "not_found", unknown: "not_found"}, "timed_out": false})
    );
    let message = json!({"target": child, "message": "more"});
    parent_turn(&mut s, &call("send_input", message)).await;
    let refused = output_of(&s.provider.requests(), "call_send_input");
    assert!(refused.as_str().unwrap().contains("not found"), "{refused}");

    // Resumed from its rollout, it is loaded again with its history.
    let messages = parent_turn(&mut s, &call("resume_agent", json!({"id": child}))).await;
    assert_eq!(
        output_of(&s.provider.requests(), "call_resume_agent"),
        json!({"status": {"completed": CHILD_ANSWER}})
    );
    let restarted = params_of(&messages, "thread/started");
    assert_eq!(restarted[0]["thread"]["id"], child.as_str());
    let loaded = s.daemon.ok("thread/loaded/list", json!({})).await;
    assert!(loaded["data"].as_array().unwrap().contains(&json!(child)));

    // Input to the idle child starts a turn on its whole history.
    let again = format!("{CHILD_TASK} (again)");
    let sent = json!({"target": child, "message": again});
    let mut messages = parent_turn(&mut s, &call("send_input", sent)).await;
    // The child's turn may start after the parent's ended: its end is waited for.
    let child_ended =
        |m: &Value| m["method"] == "turn/completed" && m["params"]["threadId"] == child.as_str();
    if !messages.iter().any(child_ended) {
        messages.extend(s.daemon.collect_until(child_ended).await);
    }
    let child_turns = params_of(&messages, "turn/started")
        .into_iter()
        .filter(|p| p["threadId"] == child.as_str())
        .count();
    assert_eq!(child_turns, 1);
    let requests = s.provider.requests();
    let sent = output_of(&requests, "call_send_input");
    assert!(sent["submission_id"].is_string(), "{sent}");
    let second = request_ending_with(&requests, &again);
    let texts = user_texts(&second.body);
    assert!(texts.iter().any(|t| t == CHILD_TASK), "{texts:?}");
    let input = second.body["input"].as_array().unwrap();
    assert!(input
        .iter()
        .any(|item| item["role"] == "assistant" && item_text(item) == CHILD_ANSWER));
}

#[tokio::test]
async fn thread_list_shows_children_only_when_asked_and_both_read_the_same_after_a_restart() {
    let mut s = session(script(), &[], thread_params()).await;
    let parent = s.thread_id.clone();
    let (child, _) = delegate(&mut s).await;

    let ids = |listed: &Value| -> Vec<String> {
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    };
    let plain = s.daemon.ok("thread/list", json!({})).await;
    assert_eq!(ids(&plain), std::slice::from_ref(&parent));
    let kinds = json!({"sourceKinds": ["subAgentThreadSpawn"]});
    let children = s.daemon.ok("thread/list", kinds.clone()).await;
    assert_eq!(ids(&children), std::slice::from_ref(&child));

    let read = |id: &str| json!({"threadId": id, "includeTurns": true});
    let mut before = Vec::new();
    for id in [&parent, &child] {
        let mut thread = s.daemon.ok("thread/read", read(id)).await["thread"].clone();
        thread["status"] = Value::Null;
        before.push(thread);
    }
    assert_eq!(before[1]["parentThreadId"], parent.as_str());
    assert_eq!(before[1]["turns"].as_array().unwrap().len(), 1);

    let Session {
        daemon,
        home,
        provider,
        ..
    } = s;
    daemon.exit_cleanly().await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    for (id, earlier) in [&parent, &child].into_iter().zip(&before) {
        let mut thread = daemon.ok("thread/read", read(id)).await["thread"].clone();
        assert_eq!(thread["status"]["type"], "notLoaded");
        thread["status"] = Value::Null;
        assert_eq!(&thread, earlier, "{id} reads differently after a restart");
    }
    let children = daemon.ok("thread/list", kinds).await;
    assert_eq!(ids(&children), [child]);
    daemon.exit_cleanly().await;
}
