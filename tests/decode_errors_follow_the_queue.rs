//! Requests that fail to decode (-32602 bad params, -32601 unknown method) go through the same
//! ingress queue as the others: the handshake applies to them (before `initialize` they are
//! "Not initialized"), and their errors never overtake answers to requests queued before them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// Ordered requests queued ahead of the undecodable one.
const AHEAD: usize = 8;

#[tokio::test]
async fn undecodable_requests_before_initialize_are_not_initialized() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    let bad_params = daemon.err("turn/start", json!({})).await;
    assert_eq!(bad_params["code"], -32600, "{bad_params}");
    assert_eq!(bad_params["message"], "Not initialized");
    let unknown = daemon.err("no/such/method", json!({})).await;
    assert_eq!(unknown["code"], -32600, "{unknown}");
    assert_eq!(unknown["message"], "Not initialized");
    // After the handshake the same requests get their decode errors.
    daemon.initialize().await;
    assert_eq!(daemon.err("turn/start", json!({})).await["code"], -32602);
    assert_eq!(
        daemon.err("no/such/method", json!({})).await["code"],
        -32601
    );
}

#[tokio::test]
async fn decode_errors_are_answered_after_requests_queued_before_them() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let mut ahead = Vec::new();
    for _ in 0..AHEAD {
        ahead.push(
            daemon
                .send_request("thread/start", json!({"ephemeral": false}))
                .await,
        );
    }
    let bad_params = daemon.send_request("turn/start", json!({})).await;
    let unknown = daemon.send_request("no/such/method", json!({})).await;
    let mut order: Vec<Value> = Vec::new();
    for _ in 0..(4 * AHEAD + 8) {
        if order.len() == AHEAD + 2 {
            break;
        }
        let message = daemon.next_message().await;
        if message.get("method").is_none() {
            order.push(message["id"].clone());
        }
    }
    let mut expected = ahead;
    expected.push(bad_params);
    expected.push(unknown);
    assert_eq!(order, expected, "responses out of arrival order");
}
