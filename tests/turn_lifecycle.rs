//! One streamed text turn, end to end, through the real binary and a loopback provider.
//!
//! Invariants checked: the notification order of a simple turn (docs/PROTOCOL.md §9); the
//! concatenated deltas equal the completed text; the second request carries the first turn's
//! items as input; the rollout holds the thread's items; token usage always names a context window.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

fn two_turn_script() -> Script {
    Script::new([
        Reply::Sse(mock_provider::simple_text_response(
            "resp_1",
            "msg_1",
            "Hello from mock",
            3,
        )),
        Reply::Sse(mock_provider::simple_text_response(
            "resp_2",
            "msg_2",
            "Second answer here",
            4,
        )),
    ])
}

#[tokio::test]
async fn two_text_turns_stream_in_order_and_carry_history() {
    let provider = MockProvider::start(two_turn_script()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));

    let init = daemon.initialize().await;
    assert_eq!(init["result"]["platformFamily"], "unix");
    assert_eq!(init["result"]["serverInfo"]["name"], "openturn");
    assert!(init["result"]["userAgent"]
        .as_str()
        .unwrap_or("")
        .starts_with("openturn-tests/"));

    let thread_id = daemon.start_thread(json!({})).await;
    let started = daemon.next_message().await;
    assert_eq!(started["method"], "thread/started");

    let response = daemon
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hello"}]}),
        )
        .await;
    assert_eq!(response["result"]["turn"]["status"], "inProgress");
    let turn = daemon.until_turn_completed().await;
    assert_eq!(
        methods(&turn),
        vec![
            "thread/status/changed",
            "turn/started",
            "item/started",
            "item/completed",
            "item/started",
            "item/agentMessage/delta",
            "item/agentMessage/delta",
            "item/agentMessage/delta",
            "item/completed",
            "thread/tokenUsage/updated",
            "account/rateLimits/updated",
            "thread/status/changed",
            "turn/completed",
        ]
    );
    assert_eq!(turn[2]["params"]["item"]["type"], "userMessage");
    assert_eq!(turn[3]["params"]["item"]["content"][0]["text"], "hello");
    let deltas: String = turn
        .iter()
        .filter(|m| m["method"] == "item/agentMessage/delta")
        .map(|m| {
            m["params"]["delta"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(turn[8]["params"]["item"]["text"], "Hello from mock");
    assert_eq!(deltas, "Hello from mock");
    assert_eq!(turn[8]["params"]["item"]["id"], "msg_1");
    assert_eq!(turn[12]["params"]["turn"]["status"], "completed");
    assert_eq!(
        turn[12]["params"]["turn"]["items"][0]["text"],
        "Hello from mock"
    );
    assert_eq!(turn[9]["params"]["tokenUsage"]["last"]["totalTokens"], 130);
    for message in &turn {
        assert!(
            message["emittedAtMs"].is_i64(),
            "notification without emittedAtMs: {message}"
        );
        assert_eq!(message["jsonrpc"], "2.0");
    }

    daemon
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "again"}]}),
        )
        .await;
    let second = daemon.until_turn_completed().await;
    assert_eq!(
        second.last().map(|m| m["params"]["turn"]["status"].clone()),
        Some(json!("completed"))
    );

    let requests = provider.wait_for_requests(2, TIMEOUT).await;
    let first_body = &requests[0].body;
    assert_eq!(first_body["stream"], true);
    assert_eq!(first_body["store"], false);
    assert_eq!(first_body["model"], "gpt-5");
    assert!(first_body["instructions"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-test-secret-key")
    );
    assert_eq!(requests[0].header("accept"), Some("text/event-stream"));
    let input: &Vec<Value> = requests[1].body["input"].as_array().expect("no input");
    let texts: Vec<(String, String)> = input
        .iter()
        .map(|item| {
            (
                item["role"].as_str().unwrap_or_default().to_string(),
                item["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    // The environment context the first turn recorded comes before the first input.
    assert_eq!(texts[0].0, "user");
    assert!(texts[0].1.starts_with("<environment_context>"), "{texts:?}");
    assert_eq!(
        texts[1..],
        vec![
            ("user".to_string(), "hello".to_string()),
            ("assistant".to_string(), "Hello from mock".to_string()),
            ("user".to_string(), "again".to_string()),
        ]
    );

    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
    let files = rollout_files(home.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let rollout = std::fs::read_to_string(&files[0]).unwrap();
    assert!(rollout.contains(&thread_id));
    assert!(rollout.contains("Hello from mock"));
    assert!(rollout.contains("Second answer here"));
    assert!(rollout.contains("\"again\""));
}

#[tokio::test]
async fn requests_before_initialize_are_refused_and_initialize_only_once() {
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &[]);
    let early = daemon.request("thread/start", json!({})).await;
    assert_eq!(early["error"]["message"], "Not initialized");
    daemon.initialize().await;
    let again = daemon
        .request(
            "initialize",
            json!({"clientInfo": {"name": "x", "version": "1"}}),
        )
        .await;
    assert_eq!(again["error"]["message"], "Already initialized");
    // Messages without "jsonrpc" are accepted (the requests above omit it).
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
}

#[tokio::test]
async fn a_missing_api_key_fails_the_turn_with_a_clear_error_and_the_daemon_lives_on() {
    let provider = MockProvider::start(two_turn_script()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn_with_env(home.path(), &mock_overrides(&provider), &[]);
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    daemon
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let turn = daemon.until_turn_completed().await;
    let completed = turn.last().cloned().unwrap_or_default();
    assert_eq!(completed["params"]["turn"]["status"], "failed");
    let message = completed["params"]["turn"]["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("OPENTURN_TEST_KEY"), "{message}");
    assert!(turn
        .iter()
        .any(|m| m["method"] == "error" && m["params"]["willRetry"] == false));
    // Still serving.
    let other = daemon.request("thread/start", json!({})).await;
    assert!(other["result"]["thread"]["id"].is_string());
}

#[tokio::test]
async fn an_unknown_provider_or_unreachable_server_fails_clearly() {
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &["model_provider=\"nowhere\"".to_string()]);
    daemon.initialize().await;
    let refused = daemon.request("thread/start", json!({})).await;
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("model_providers.nowhere"));

    // A port nothing listens on: bind, learn the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(9);
    let thread_id = daemon
        .start_thread(json!({"config": {
            "model_provider": "dead",
            "model_providers.dead.base_url": format!("http://127.0.0.1:{port}/v1"),
            "model_providers.dead.request_max_retries": 0,
        }}))
        .await;
    daemon
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let turn = daemon.until_turn_completed().await;
    let completed = turn.last().cloned().unwrap_or_default();
    assert_eq!(completed["params"]["turn"]["status"], "failed");
    let message = completed["params"]["turn"]["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("could not reach provider `dead`"),
        "{message}"
    );
}

/// `modelContextWindow` of the one turn's `thread/tokenUsage/updated`, run with `extra` overrides.
async fn context_window_reported(extra: &[&str]) -> Value {
    let provider = MockProvider::start(two_turn_script()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.extend(extra.iter().map(|o| o.to_string()));
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let turn = text_turn(&mut daemon, &thread_id, "hello").await;
    let usage: Vec<&Value> = turn
        .iter()
        .filter(|m| m["method"] == "thread/tokenUsage/updated")
        .collect();
    assert_eq!(usage.len(), 1, "{turn:?}");
    usage[0]["params"]["tokenUsage"]["modelContextWindow"].clone()
}

#[tokio::test]
async fn token_usage_reports_the_configured_context_window_or_95_percent_of_272000() {
    assert_eq!(context_window_reported(&[]).await, json!(258_400));
    assert_eq!(
        context_window_reported(&["model_context_window=100000"]).await,
        json!(100_000)
    );
}

/// A turn whose task dies (here a compaction turn, made to panic as its task begins by the
/// debug-build hook `OPENTURN_TEST_PANIC_TURN`) still ends once, as failed, and a `turn/start`
/// sent right behind it — queued while it was ending — still starts and completes.
#[tokio::test]
async fn a_turn_queued_behind_one_whose_task_died_still_starts() {
    let provider = MockProvider::start(Script::new([Reply::Sse(
        mock_provider::simple_text_response("resp_1", "msg_1", "Still here", 2),
    )]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn_with_env(
        home.path(),
        &mock_overrides(&provider),
        &[
            ("OPENTURN_TEST_KEY", "sk-test-secret-key"),
            ("OPENTURN_TEST_PANIC_TURN", "compaction"),
        ],
    );
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    daemon
        .ok("thread/compact/start", json!({"threadId": thread_id}))
        .await;
    let started = daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let queued = started["turn"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let messages = daemon
        .collect_until(|m| m["method"] == "turn/completed" && m["params"]["turn"]["id"] == queued)
        .await;
    let ends: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "turn/completed")
        .collect();
    assert_eq!(ends.len(), 2, "{messages:#?}");
    let died = &ends[0]["params"]["turn"];
    assert_ne!(died["id"], queued.as_str(), "{messages:#?}");
    assert_eq!(died["status"], "failed", "{messages:#?}");
    assert_eq!(
        died["error"]["message"], "the turn stopped unexpectedly",
        "{messages:#?}"
    );
    // Each turn's start comes before its end, and the queued turn starts after the other ended.
    let position = |method: &str, id: &Value| {
        messages
            .iter()
            .position(|m| m["method"] == method && m["params"]["turn"]["id"] == *id)
    };
    let died_start = position("turn/started", &died["id"]);
    let died_end = position("turn/completed", &died["id"]);
    let queued_start = position("turn/started", &json!(queued));
    assert!(
        died_start.is_some() && died_start < died_end && died_end < queued_start,
        "{messages:#?}"
    );
    let done = &ends[1]["params"]["turn"];
    assert_eq!(done["status"], "completed", "{messages:#?}");
    assert_eq!(done["items"][0]["text"], "Still here", "{messages:#?}");
}
