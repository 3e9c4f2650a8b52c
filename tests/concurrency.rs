//! Many threads run turns at once, each with its own projection task: one thread's stalled or
//! failing provider never delays another thread's notifications.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::json;
use support::*;

#[tokio::test]
async fn a_stalled_thread_does_not_delay_another_threads_turn() {
    let slow = MockProvider::start(Script::new([stalled_text_reply("msg_slow", &["wait"])]))
        .await
        .unwrap();
    let failing = MockProvider::start(Script::new([mock_provider::error_status(
        500,
        "server_error",
        "boom",
    )]))
    .await
    .unwrap();
    let fast = MockProvider::start(Script::new([text_reply(0, "fast answer")]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&fast);
    for (name, provider) in [("slow", &slow), ("failing", &failing)] {
        overrides.push(format!(
            "model_providers.{name}.base_url=\"{}\"",
            provider.base_url()
        ));
        overrides.push(format!(
            "model_providers.{name}.env_key=\"OPENTURN_TEST_KEY\""
        ));
        overrides.push(format!("model_providers.{name}.request_max_retries=0"));
        overrides.push(format!("model_providers.{name}.stream_max_retries=0"));
    }
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let stalled = daemon.start_thread(json!({"modelProvider": "slow"})).await;
    let broken = daemon
        .start_thread(json!({"modelProvider": "failing"}))
        .await;
    let healthy = daemon.start_thread(json!({})).await;
    let input = json!([{"type": "text", "text": "go"}]);
    daemon
        .ok("turn/start", json!({"threadId": stalled, "input": input}))
        .await;
    daemon.notification("item/agentMessage/delta").await;
    daemon
        .ok("turn/start", json!({"threadId": broken, "input": input}))
        .await;
    daemon
        .ok("turn/start", json!({"threadId": healthy, "input": input}))
        .await;

    // Both other turns end while the stalled one is still open.
    let mut ended = Vec::new();
    while ended.len() < 2 {
        let message = daemon.notification("turn/completed").await;
        ended.push((
            message["params"]["threadId"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            message["params"]["turn"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ));
    }
    ended.sort();
    let mut expected = vec![
        (broken.clone(), "failed".to_string()),
        (healthy.clone(), "completed".to_string()),
    ];
    expected.sort();
    assert_eq!(ended, expected);
    let read = daemon.ok("thread/read", json!({"threadId": stalled})).await;
    assert_eq!(read["thread"]["status"]["type"], "active");
    let broken_read = daemon.ok("thread/read", json!({"threadId": broken})).await;
    assert_eq!(broken_read["thread"]["status"]["type"], "systemError");

    let turn = daemon
        .ok(
            "thread/read",
            json!({"threadId": stalled, "includeTurns": true}),
        )
        .await["thread"]["turns"][0]["id"]
        .clone();
    daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": stalled, "turnId": turn}),
        )
        .await;
    let done = daemon.notification("turn/completed").await;
    assert_eq!(done["params"]["threadId"], stalled.as_str());
    assert_eq!(done["params"]["turn"]["status"], "interrupted");
}
