//! A turn's `durationMs` is one figure: `thread/read` (rebuilt from the rollout, also after a
//! restart) reports the milliseconds `turn/completed` reported for the same turn, not the whole
//! seconds between its start and end timestamps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

/// A reply paced so the turn takes a few hundred milliseconds: long enough that a
/// whole-seconds figure (0 or 1000) cannot match the measured one by chance.
fn paced_reply() -> Reply {
    let reply = mock_provider::ResponseBuilder::new("resp_paced")
        .created()
        .text_message("msg_paced", &["one ", "two ", "three"])
        .completed(mock_provider::Usage::example(), None)
        .into_reply()
        .with_pace(Duration::from_millis(60));
    Reply::Sse(reply)
}

fn duration_of(turn: &Value) -> i64 {
    turn["durationMs"]
        .as_i64()
        .unwrap_or_else(|| panic!("no durationMs in {turn}"))
}

#[tokio::test]
async fn thread_read_reports_the_duration_turn_completed_reported() {
    let provider = MockProvider::start(Script::new([paced_reply()]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let messages = text_turn(&mut daemon, &thread_id, "take your time").await;
    let completed = messages
        .iter()
        .find(|m| m["method"] == "turn/completed")
        .expect("no turn/completed");
    let live = duration_of(&completed["params"]["turn"]);
    assert!(live >= 100, "the paced turn took {live} ms");

    let read = daemon
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    assert_eq!(duration_of(&read["thread"]["turns"][0]), live);

    // After a restart the figure comes from the rollout alone.
    daemon.kill9().await;
    let mut restarted = Daemon::spawn(home.path(), &mock_overrides(&provider));
    restarted.initialize().await;
    let read = restarted
        .ok(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    assert_eq!(duration_of(&read["thread"]["turns"][0]), live);
}
