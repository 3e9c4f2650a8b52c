//! A thread's goal through the real binary (docs/PROTOCOL.md, "Goals"): `thread/goal/set` on an
//! idle thread starts a turn by itself that carries the objective to the model; while the goal
//! stays active another turn follows each one, until the model calls `update_goal` with
//! `complete`, the token budget runs out (`budgetLimited`), a turn fails (`blocked`), or the
//! work stops moving (`blocked` after the no-progress limit); an interrupt leaves the goal active
//! and starts nothing; `paused` starts nothing; the goal survives a restart (readable without
//! loading the thread) and a resumed thread goes back to work on an active goal.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn update_goal_reply(id: &str, status: &str) -> Reply {
    ResponseBuilder::new(id)
        .created()
        .function_call_json(
            &format!("fc_{id}"),
            &format!("call_{id}"),
            "update_goal",
            json!({ "status": status }),
        )
        .completed(Usage::small(), None)
        .build()
}

async fn set_goal(s: &mut Session, params: Value) -> Value {
    let mut full = json!({ "threadId": s.thread_id });
    if let (Some(full), Value::Object(params)) = (full.as_object_mut(), params) {
        full.extend(params);
    }
    s.daemon.ok("thread/goal/set", full).await["goal"].clone()
}

async fn goal_of(daemon: &mut Daemon, thread_id: &str) -> Value {
    daemon
        .ok("thread/goal/get", json!({ "threadId": thread_id }))
        .await["goal"]
        .clone()
}

/// Every message up to the `n`th `turn/completed`.
async fn until_turns_completed(daemon: &mut Daemon, n: usize) -> Vec<Value> {
    let mut all = Vec::new();
    for _ in 0..n {
        all.extend(daemon.until_turn_completed().await);
    }
    all
}

/// The status of the last `thread/goal/updated` in `messages`.
fn last_goal_status(messages: &[Value]) -> Value {
    params_of(messages, "thread/goal/updated")
        .last()
        .map(|update| update["goal"]["status"].clone())
        .unwrap_or(Value::Null)
}

/// Pauses the goal and returns what arrived meanwhile: had a turn started for the goal after
/// the last one ended, its `turn/started` would be among them (it is emitted before the goal's
/// next turn could be admitted by anything else).
async fn pause_and_collect(s: &mut Session) -> Vec<Value> {
    let id = s
        .daemon
        .send_request(
            "thread/goal/set",
            json!({ "threadId": s.thread_id, "status": "paused" }),
        )
        .await;
    s.daemon
        .collect_until(|m| m.get("id") == Some(&id) && m.get("method").is_none())
        .await
}

fn texts_containing(body: &Value, needle: &str) -> usize {
    user_texts(body)
        .iter()
        .filter(|text| text.contains(needle))
        .count()
}

#[tokio::test]
async fn an_active_goal_starts_a_turn_and_continues_until_the_model_completes_it() {
    let script = Script::new([
        message_with_total("r1", "m1", &["working on it"], 100),
        update_goal_reply("r2", "complete"),
        message_reply("r3", "m3", &["all done"]),
    ]);
    let mut s = session(script, &[], json!({})).await;
    let goal = set_goal(
        &mut s,
        json!({ "objective": "Write hello.txt", "tokenBudget": 100000 }),
    )
    .await;
    assert_eq!(goal["status"], "active");
    assert_eq!(goal["tokensUsed"], 0);
    assert_eq!(goal["objective"], "Write hello.txt");
    let messages = until_turns_completed(&mut s.daemon, 2).await;
    let methods = methods(&messages);
    assert_eq!(methods[0], "thread/goal/updated", "{methods:?}");
    assert_eq!(messages[0]["params"]["turnId"], Value::Null);
    assert!(methods.contains(&"turn/started".to_string()));
    // The goal's turns carry no user message the client would show.
    assert!(items_of(&messages, "item/completed", "userMessage").is_empty());
    let updates = params_of(&messages, "thread/goal/updated");
    // The first turn is counted on the goal before it ends; the model's update completes it.
    assert!(
        updates
            .iter()
            .any(|u| u["goal"]["status"] == "active" && u["goal"]["tokensUsed"] == 100),
        "{updates:#?}"
    );
    assert_eq!(last_goal_status(&messages), "complete");

    let bodies = s.bodies(3).await;
    for name in ["get_goal", "create_goal", "update_goal"] {
        assert!(tool_names(&bodies[0]).contains(&name.to_string()), "{name}");
    }
    let objective = "<codex_internal_context source=\"goal_objective\">\nWrite hello.txt\n";
    assert_eq!(texts_containing(&bodies[0], objective), 1);
    assert_eq!(
        texts_containing(
            &bodies[0],
            "- Tokens used: 0\n- Token budget: 100000\n- Tokens remaining: 100000"
        ),
        1
    );
    // The second turn: the objective is not repeated, the budget is as it stands.
    assert_eq!(texts_containing(&bodies[1], objective), 1);
    assert_eq!(texts_containing(&bodies[1], "- Tokens used: 100\n"), 1);
    let outputs = call_outputs(&bodies[2]);
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    let output: Value = serde_json::from_str(&outputs[0].1).unwrap();
    assert_eq!(output["goal"]["status"], "complete");
    assert_eq!(output["goal"]["threadId"], json!(s.thread_id));
    assert_eq!(output["remainingTokens"], 100000 - 100);
    assert!(output["completionBudgetReport"].is_string(), "{output}");

    let after = pause_and_collect(&mut s).await;
    assert!(
        !methods_of(&after).contains(&"turn/started".to_string()),
        "{after:#?}"
    );
    assert_eq!(s.provider.requests().len(), 3);
    let goal = goal_of(&mut s.daemon, &s.thread_id.clone()).await;
    assert_eq!(goal["status"], "paused");
    assert_eq!(goal["tokensUsed"], 100);
}

fn methods_of(messages: &[Value]) -> Vec<String> {
    methods(messages)
}

#[tokio::test]
async fn a_goal_whose_budget_runs_out_is_budget_limited_and_stops() {
    let script = Script::new([
        message_with_total("r1", "m1", &["step one"], 100),
        message_with_total("r2", "m2", &["step two"], 100),
    ]);
    let mut s = session(script, &[], json!({})).await;
    set_goal(&mut s, json!({ "objective": "Count", "tokenBudget": 150 })).await;
    let messages = until_turns_completed(&mut s.daemon, 2).await;
    assert_eq!(last_goal_status(&messages), "budgetLimited");
    let goal = goal_of(&mut s.daemon, &s.thread_id.clone()).await;
    assert_eq!(
        (goal["status"].clone(), goal["tokensUsed"].clone()),
        (json!("budgetLimited"), json!(200))
    );
    let after = pause_and_collect(&mut s).await;
    assert!(
        !methods_of(&after).contains(&"turn/started".to_string()),
        "{after:#?}"
    );
    assert_eq!(s.provider.requests().len(), 2);
}

#[tokio::test]
async fn a_failed_goal_turn_blocks_the_goal() {
    let script = Script::new([mock_provider::error_status(
        400,
        "invalid_request_error",
        "the request was refused",
    )]);
    let mut s = session(script, &[], json!({})).await;
    set_goal(&mut s, json!({ "objective": "Try" })).await;
    let messages = s.daemon.until_turn_completed().await;
    single_turn_end(&messages, "failed");
    assert_eq!(last_goal_status(&messages), "blocked");
    let after = pause_and_collect(&mut s).await;
    assert!(
        !methods_of(&after).contains(&"turn/started".to_string()),
        "{after:#?}"
    );
    assert_eq!(s.provider.requests().len(), 1);
}

#[tokio::test]
async fn turns_that_call_no_tool_block_the_goal_after_the_limit() {
    let script = Script::new([
        message_reply("r1", "m1", &["thinking"]),
        message_reply("r2", "m2", &["still thinking"]),
        message_reply("r3", "m3", &["thinking more"]),
    ]);
    let mut s = session(script, &[], json!({})).await;
    set_goal(&mut s, json!({ "objective": "Loop" })).await;
    let messages = until_turns_completed(&mut s.daemon, 3).await;
    assert_eq!(last_goal_status(&messages), "blocked");
    assert!(
        params_of(&messages, "warning").iter().any(|w| w["message"]
            .as_str()
            .unwrap_or_default()
            .contains("called no tool")),
        "{messages:#?}"
    );
    let after = pause_and_collect(&mut s).await;
    assert!(
        !methods_of(&after).contains(&"turn/started".to_string()),
        "{after:#?}"
    );
    assert_eq!(s.provider.requests().len(), 3);
}

#[tokio::test]
async fn an_interrupted_goal_turn_leaves_the_goal_active_and_starts_nothing() {
    let script = Script::new([stalled_text_reply("m1", &["partial"])]);
    let mut s = session(script, &[], json!({})).await;
    set_goal(&mut s, json!({ "objective": "Slow work" })).await;
    let started = s.daemon.notification("turn/started").await;
    let turn_id = started["params"]["turn"]["id"].clone();
    s.provider.wait_for_requests(1, TIMEOUT).await;
    s.daemon
        .ok(
            "turn/interrupt",
            json!({ "threadId": s.thread_id, "turnId": turn_id }),
        )
        .await;
    let messages = s.daemon.until_turn_completed().await;
    single_turn_end(&messages, "interrupted");
    let goal = goal_of(&mut s.daemon, &s.thread_id.clone()).await;
    assert_eq!(goal["status"], "active");
    let after = pause_and_collect(&mut s).await;
    assert!(
        !methods_of(&after).contains(&"turn/started".to_string()),
        "{after:#?}"
    );
    assert_eq!(s.provider.requests().len(), 1);
}

#[tokio::test]
async fn a_paused_goal_starts_nothing_and_a_user_turn_does_not_wake_it() {
    let script = Script::new([message_reply("r1", "m1", &["hello back"])]);
    let mut s = session(script, &[], json!({})).await;
    let goal = set_goal(&mut s, json!({ "objective": "Later", "status": "paused" })).await;
    assert_eq!(goal["status"], "paused");
    let update = s.daemon.notification("thread/goal/updated").await;
    assert_eq!(update["params"]["turnId"], Value::Null);
    let turn = s.run_turn("hello").await;
    single_turn_end(&turn, "completed");
    assert!(!methods(&turn).contains(&"thread/goal/updated".to_string()));
    let body = &s.bodies(1).await[0];
    assert_eq!(texts_containing(body, "codex_internal_context"), 0);
    let goal = goal_of(&mut s.daemon, &s.thread_id.clone()).await;
    assert_eq!(
        (goal["status"].clone(), goal["tokensUsed"].clone()),
        (json!("paused"), json!(0))
    );
    assert_eq!(s.provider.requests().len(), 1);
}

#[tokio::test]
async fn the_goal_survives_a_restart_and_a_resumed_thread_goes_back_to_work() {
    let script = Script::new([stalled_text_reply("m1", &["partial"])]);
    let mut s = session(script, &[], json!({})).await;
    set_goal(
        &mut s,
        json!({ "objective": "Persisted objective", "tokenBudget": 5000 }),
    )
    .await;
    let started = s.daemon.notification("turn/started").await;
    s.provider.wait_for_requests(1, TIMEOUT).await;
    let turn_id = started["params"]["turn"]["id"].clone();
    s.daemon
        .ok(
            "turn/interrupt",
            json!({ "threadId": s.thread_id, "turnId": turn_id }),
        )
        .await;
    s.daemon.until_turn_completed().await;
    let Session {
        home,
        daemon,
        thread_id,
        ..
    } = s;
    daemon.exit_cleanly().await;

    let provider = MockProvider::start(Script::new([
        update_goal_reply("r2", "complete"),
        message_reply("r3", "m3", &["finished"]),
    ]))
    .await
    .unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    // Read from the rollout: the thread is not loaded.
    let goal = goal_of(&mut daemon, &thread_id).await;
    assert_eq!(goal["objective"], "Persisted objective");
    assert_eq!(goal["status"], "active");
    assert_eq!(goal["tokenBudget"], 5000);
    let unknown = daemon
        .err(
            "thread/goal/get",
            json!({ "threadId": "00000000-0000-4000-8000-000000000000" }),
        )
        .await;
    assert_eq!(unknown["code"], -32600, "{unknown}");
    daemon
        .ok("thread/resume", json!({ "threadId": thread_id }))
        .await;
    let messages = daemon.until_turn_completed().await;
    assert_eq!(last_goal_status(&messages), "complete");
    let requests = provider.wait_for_requests(2, TIMEOUT).await;
    // The resumed turn is the goal's: its last user message is the continuation.
    let texts = user_texts(&requests[0].body);
    let last = texts.last().cloned().unwrap_or_default();
    assert!(last.contains("- Token budget: 5000"), "{texts:#?}");
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn goal_params_that_cannot_be_used_are_refused_naming_the_field() {
    let mut s = session(Script::new([]), &[], json!({})).await;
    let thread_id = s.thread_id.clone();
    let cases = [
        (
            json!({ "threadId": thread_id, "status": "bogus" }),
            "status",
        ),
        (
            json!({ "threadId": thread_id, "objective": "x", "tokenBudget": 0 }),
            "tokenBudget",
        ),
        (
            json!({ "threadId": thread_id, "objective": "" }),
            "objective",
        ),
        (json!({ "objective": "x" }), "threadId"),
    ];
    for (params, field) in cases {
        let error = s.daemon.err("thread/goal/set", params.clone()).await;
        assert_eq!(error["code"], -32602, "{params}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains(field),
            "{params}: {error}"
        );
    }
    let error = s.daemon.err("thread/goal/get", json!({})).await;
    assert_eq!(error["code"], -32602, "{error}");
    // Changing a goal that does not exist is a request the thread cannot serve.
    let error = s
        .daemon
        .err(
            "thread/goal/set",
            json!({ "threadId": thread_id, "status": "active" }),
        )
        .await;
    assert_eq!(error["code"], -32600, "{error}");
    let cleared = s
        .daemon
        .ok("thread/goal/clear", json!({ "threadId": thread_id }))
        .await;
    assert_eq!(cleared, json!({ "cleared": false }));
    assert_eq!(goal_of(&mut s.daemon, &thread_id).await, Value::Null);
}

fn goal_call(id: &str, name: &str, args: Value) -> Reply {
    ResponseBuilder::new(id)
        .created()
        .function_call_json(&format!("fc_{id}"), &format!("call_{id}"), name, args)
        .completed(Usage::small(), None)
        .build()
}

#[tokio::test]
async fn the_model_creates_reads_and_pauses_a_goal_with_its_tools() {
    let script = Script::new([
        goal_call(
            "r1",
            "create_goal",
            json!({"objective": "Make tea", "token_budget": 5000}),
        ),
        goal_call("r2", "get_goal", json!({})),
        goal_call("r3", "create_goal", json!({"objective": "Other"})),
        goal_call("r4", "update_goal", json!({"status": "active"})),
        goal_call("r5", "update_goal", json!({"status": "paused"})),
        message_reply("r6", "m6", &["paused"]),
    ]);
    let mut s = session(script, &[], json!({})).await;
    let turn = s.run_turn("set a goal to make tea").await;
    let turn_id = single_turn_end(&turn, "completed")["id"].clone();
    let updates = params_of(&turn, "thread/goal/updated");
    let seen: Vec<(Value, Value)> = updates
        .iter()
        .map(|u| (u["turnId"].clone(), u["goal"]["status"].clone()))
        .collect();
    // Created, paused by the model; the turn's end counts nothing on a paused goal.
    assert_eq!(
        seen,
        vec![
            (turn_id.clone(), json!("active")),
            (turn_id, json!("paused"))
        ]
    );
    let bodies = s.bodies(6).await;
    let output = |n: usize| call_outputs(&bodies[n]).last().cloned().unwrap().1;
    let created: Value = serde_json::from_str(&output(1)).unwrap();
    assert_eq!(created["goal"]["objective"], "Make tea");
    assert_eq!(created["goal"]["tokenBudget"], 5000);
    assert_eq!(created["remainingTokens"], 5000);
    assert_eq!(created["completionBudgetReport"], Value::Null);
    let read: Value = serde_json::from_str(&output(2)).unwrap();
    assert_eq!(read["goal"]["status"], "active");
    assert!(output(3).contains("unfinished goal"), "{}", output(3));
    assert!(
        output(4).contains("complete, blocked or paused"),
        "{}",
        output(4)
    );
    let paused: Value = serde_json::from_str(&output(5)).unwrap();
    assert_eq!(paused["goal"]["status"], "paused");
    let after = pause_and_collect(&mut s).await;
    assert!(
        !methods_of(&after).contains(&"turn/started".to_string()),
        "{after:#?}"
    );
    assert_eq!(s.provider.requests().len(), 6);
}
