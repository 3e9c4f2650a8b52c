//! Benchmark (ignored by default): `thread/list` pages out of 10,000 persisted threads. Run with
//! `cargo test --release --test thread_list_bench -- --ignored --nocapture`; it prints the time of
//! the first call (which builds the index from the rollouts once) and of later pages (served from
//! the index). No timing is asserted.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::time::Instant;

use serde_json::json;
use support::*;

const THREADS: usize = 10_000;

fn write_rollouts(home: &std::path::Path) {
    let day = home.join("sessions/2026/01/01");
    std::fs::create_dir_all(&day).unwrap();
    for n in 0..THREADS {
        let id = uuid::Uuid::now_v7().to_string();
        let meta = json!({"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {
            "id": id, "created_at": 1_767_225_600 + n as i64, "cwd": format!("/work/p{}", n % 10),
            "model": "gpt-5", "model_provider": "mock", "originator": "bench", "cli_version": "0.1.0",
            "source": "appServer"}});
        let user = json!({"timestamp": "2026-01-01T00:00:00.000Z", "type": "turn_item", "payload": {
            "turn_id": "t", "item": {"type": "user_message", "id": "u", "content": [{"type": "text", "text": format!("question {n}")}]}}});
        std::fs::write(
            day.join(format!("rollout-2026-01-01T00-00-00-{id}.jsonl")),
            format!("{meta}\n{user}\n"),
        )
        .unwrap();
    }
}

#[tokio::test]
#[ignore = "benchmark: run explicitly with --ignored"]
async fn thread_list_page_out_of_ten_thousand_threads() {
    let home = tempfile::tempdir().unwrap();
    write_rollouts(home.path());
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    // One checked page proves the shapes; the timed ones skip the (debug-built) checker.
    daemon.ok("thread/list", json!({"limit": 50})).await;
    daemon.check_shapes = false;
    let started = Instant::now();
    let first = daemon.ok("thread/list", json!({"limit": 50})).await;
    println!(
        "a page after the index rebuild from {THREADS} rollouts: {:?}",
        started.elapsed()
    );
    let mut cursor = first["nextCursor"].clone();
    let mut samples = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let page = daemon
            .ok("thread/list", json!({"limit": 50, "cursor": cursor}))
            .await;
        samples.push(started.elapsed());
        cursor = page["nextCursor"].clone();
        assert_eq!(page["data"].as_array().map(Vec::len), Some(50));
    }
    let filtered = Instant::now();
    let page = daemon
        .ok(
            "thread/list",
            json!({"limit": 50, "cwd": "/work/p3", "sortKey": "updated_at"}),
        )
        .await;
    let filtered = filtered.elapsed();
    assert_eq!(page["data"].as_array().map(Vec::len), Some(50));
    samples.sort();
    println!(
        "later pages of 50 (round trip through the daemon): median {:?}, max {:?}; filtered by cwd: {:?}",
        samples[samples.len() / 2],
        samples[samples.len() - 1],
        filtered
    );
}
