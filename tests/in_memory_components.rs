//! Component tests on the in-memory harness (`support::in_memory`): the whole server runs in
//! this process over duplex pipes, on a runtime whose clock is paused, so behaviour that takes
//! minutes of wall time — idle unloading, a provider that goes quiet — is checked in
//! milliseconds and exactly at its boundary. The clock only moves when every task waits on a
//! timer (tokio's auto-advance), so nothing here sleeps for real.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::time::Duration;

use serde_json::json;
use support::in_memory::{mock_config, InMemory};
use support::*;

/// The default `thread_unload_delay_secs`.
const UNLOAD_DELAY: Duration = Duration::from_secs(30 * 60);
/// The default `stream_idle_timeout_ms`.
const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Longer than any virtual wait below (see `InMemory::with_timeout`).
const READ_TIMEOUT: Duration = Duration::from_secs(4 * 60 * 60);

async fn started(
    script: Script,
    extra: &[&str],
) -> (InMemory, String, MockProvider, tempfile::TempDir) {
    let provider = MockProvider::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client =
        InMemory::start(mock_config(home.path(), &provider, extra)).with_timeout(READ_TIMEOUT);
    client.initialize().await;
    let thread_id = client.start_thread().await;
    (client, thread_id, provider, home)
}

async fn loaded_threads(client: &mut InMemory) -> serde_json::Value {
    client.request("thread/loaded/list", json!({})).await["result"]["data"].clone()
}

#[tokio::test(start_paused = true)]
async fn an_unsubscribed_idle_thread_stays_loaded_for_the_whole_delay_then_unloads() {
    let (mut client, thread_id, _provider, _home) = started(Script::new([]), &[]).await;
    let response = client
        .request("thread/unsubscribe", json!({"threadId": thread_id}))
        .await;
    assert_eq!(response["result"]["status"], "unsubscribed");
    let unsubscribed_at = tokio::time::Instant::now();

    tokio::time::sleep(UNLOAD_DELAY - Duration::from_secs(1)).await;
    assert_eq!(loaded_threads(&mut client).await, json!([thread_id]));

    let closed = client
        .collect_until(|m| m["method"] == "thread/closed")
        .await;
    let unloaded_after = unsubscribed_at.elapsed();
    assert!(
        unloaded_after >= UNLOAD_DELAY && unloaded_after < UNLOAD_DELAY + Duration::from_secs(1),
        "unloaded after {unloaded_after:?}, the delay is {UNLOAD_DELAY:?}"
    );
    let statuses: Vec<_> = closed
        .iter()
        .filter(|m| m["method"] == "thread/status/changed")
        .map(|m| m["params"]["status"]["type"].clone())
        .collect();
    assert_eq!(statuses.last(), Some(&json!("notLoaded")), "{closed:#?}");
    assert_eq!(loaded_threads(&mut client).await, json!([]));
    client.shut_down().await;
}

/// A reply whose events come `pace` apart.
fn paced_reply(pace: Duration) -> Reply {
    Reply::Sse(
        mock_provider::ResponseBuilder::new("resp_quiet")
            .created()
            .text_message("msg_quiet", &["slow ", "but ", "steady"])
            .completed(mock_provider::Usage::example(), None)
            .into_reply()
            .with_pace(pace),
    )
}

async fn run_turn(client: &mut InMemory, thread_id: &str) -> Vec<serde_json::Value> {
    let response = client
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
        )
        .await;
    assert!(response.get("result").is_some(), "{response}");
    client
        .collect_until(|m| m["method"] == "turn/completed")
        .await
}

#[tokio::test(start_paused = true)]
async fn a_provider_quiet_for_less_than_the_idle_timeout_keeps_its_stream() {
    let pace = STREAM_IDLE_TIMEOUT - Duration::from_secs(1);
    let (mut client, thread_id, _provider, _home) =
        started(Script::new([paced_reply(pace)]), &[]).await;
    let turn = run_turn(&mut client, &thread_id).await;
    let end = turn.last().map(|m| &m["params"]["turn"]);
    assert_eq!(
        end.map(|t| &t["status"]),
        Some(&json!("completed")),
        "{turn:#?}"
    );
    let text: String = turn
        .iter()
        .filter(|m| m["method"] == "item/agentMessage/delta")
        .filter_map(|m| m["params"]["delta"].as_str())
        .collect();
    assert_eq!(text, "slow but steady");
    client.shut_down().await;
}

#[tokio::test(start_paused = true)]
async fn a_provider_quiet_for_longer_than_the_idle_timeout_fails_the_turn() {
    let pace = STREAM_IDLE_TIMEOUT + Duration::from_secs(1);
    let (mut client, thread_id, _provider, _home) =
        started(Script::new([paced_reply(pace)]), &[]).await;
    let started_at = tokio::time::Instant::now();
    let turn = run_turn(&mut client, &thread_id).await;
    let end = turn.last().map(|m| &m["params"]["turn"]);
    assert_eq!(
        end.map(|t| &t["status"]),
        Some(&json!("failed")),
        "{turn:#?}"
    );
    let error = end
        .map(|t| t["error"]["message"].to_string())
        .unwrap_or_default();
    assert!(
        error.contains("idle") || error.contains("timed out"),
        "{error}"
    );
    assert!(
        started_at.elapsed() >= STREAM_IDLE_TIMEOUT,
        "the turn failed after {:?}, before the idle timeout",
        started_at.elapsed()
    );
    client.shut_down().await;
}
