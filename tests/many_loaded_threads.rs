//! Loaded threads hold no blocking-pool thread while idle: one daemon keeps answering after
//! more persistent threads are loaded than tokio's blocking pool has threads (512).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// More than the blocking pool's default limit of 512.
const THREADS: usize = 600;
const BATCH: usize = 50;

#[tokio::test]
async fn hundreds_of_loaded_threads_do_not_exhaust_the_blocking_pool() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    // In batches, to stay under the ingress queue's bound.
    for _ in 0..THREADS / BATCH {
        let mut ids: Vec<Value> = Vec::with_capacity(BATCH);
        for _ in 0..BATCH {
            ids.push(
                daemon
                    .send_request("thread/start", json!({"ephemeral": false}))
                    .await,
            );
        }
        for id in ids {
            let response = daemon.response_to(id).await;
            assert!(
                response["result"]["thread"]["id"].is_string(),
                "thread/start failed: {response}"
            );
        }
        daemon.clear_backlog();
    }
    let loaded = daemon.ok("thread/loaded/list", json!({})).await;
    assert_eq!(
        loaded["data"].as_array().map(Vec::len),
        Some(THREADS),
        "{loaded}"
    );
}
