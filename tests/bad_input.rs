//! Bad input gets a JSON-RPC error and the daemon keeps serving (PROTOCOL.md §14): invalid JSON
//! and invalid UTF-8 → -32700 with `"id": null`; a value that is not a request object → -32600;
//! unknown method → -32601; bad params → -32602 naming the field; an oversized line is refused;
//! a full ingress queue → -32001 with a reason; unknown thread and turn ids → the reference's
//! messages.

mod support;

use serde_json::{json, Value};
use support::*;

async fn daemon_with(extra: &[&str]) -> (Daemon, tempfile::TempDir, MockProvider) {
    let provider = MockProvider::start(Script::new(Vec::new()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut overrides = mock_overrides(&provider);
    overrides.extend(extra.iter().map(|s| s.to_string()));
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    (daemon, home, provider)
}

/// The next message that is an error reply.
async fn next_error(daemon: &mut Daemon) -> Value {
    daemon
        .collect_until(|m| m.get("error").is_some())
        .await
        .pop()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn malformed_lines_get_errors_and_the_daemon_keeps_serving() {
    let (mut daemon, _home, _provider) = daemon_with(&["max_line_bytes=4096"]).await;
    daemon.send_raw(b"{not json\n").await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700);

    daemon
        .send_raw(b"{\"id\":1,\"method\":\"thread/list\xff\xfe\"}\n")
        .await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700);
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("UTF-8")));

    daemon.send_raw(b"[1,2,3]\n").await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["id"], Value::Null);

    daemon.send_raw(b"{\"id\":\"abc\"}\n").await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["id"], "abc");

    daemon.send_raw(b"\n   \n").await; // Blank lines are ignored.

    let unknown = daemon.request("nope/x", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    assert!(unknown["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("nope/x")));

    let bad = daemon
        .request(
            "turn/start",
            json!({"threadId": "x", "input": [{"type": "text", "text": 5}]}),
        )
        .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("input[0]")),
        "{bad}"
    );
    let missing = daemon.request("thread/read", json!({})).await;
    assert_eq!(missing["error"]["code"], -32602);
    assert!(missing["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("threadId")));

    let mut huge = b"{\"id\":99,\"method\":\"thread/list\",\"params\":{\"searchTerm\":\"".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 64 * 1024));
    huge.extend_from_slice(b"\"}}\n");
    daemon.send_raw(&huge).await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["error"]["data"]["reason"], "line_too_long");

    // Omitted params read as {} when every field is optional; a string id is echoed verbatim.
    daemon
        .send(json!({"id": "str-id", "method": "thread/loaded/list"}))
        .await;
    let answer = daemon.response_to(json!("str-id")).await;
    assert_eq!(answer["result"]["data"], json!([]));
    daemon
        .send(json!({"method": "thread/list", "params": {}}))
        .await; // A notification: no reply.
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));
}

#[tokio::test]
async fn unknown_thread_and_turn_ids_get_the_reference_messages() {
    let (mut daemon, _home, _provider) = daemon_with(&[]).await;
    let unknown = uuid::Uuid::now_v7().to_string();
    let input = json!([{"type": "text", "text": "hi"}]);
    let error = daemon
        .err("turn/start", json!({"threadId": unknown, "input": input}))
        .await;
    assert_eq!(error["message"], format!("thread not found: {unknown}"));
    let error = daemon
        .err(
            "turn/start",
            json!({"threadId": "not-a-uuid", "input": input}),
        )
        .await;
    assert!(error["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("invalid thread id: ")));
    let error = daemon
        .err("thread/resume", json!({"threadId": unknown}))
        .await;
    assert_eq!(
        error["message"],
        format!("no rollout found for thread id {unknown}")
    );
    let thread = daemon.start_thread(json!({})).await;
    let error = daemon
        .err("turn/interrupt", json!({"threadId": thread, "turnId": "t"}))
        .await;
    assert_eq!(error["message"], "no active turn to interrupt");
    let error = daemon
        .err(
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": "t", "input": input}),
        )
        .await;
    assert_eq!(error["message"], "no active turn to steer");
}

#[tokio::test]
async fn a_full_ingress_queue_is_refused_as_overloaded_and_every_request_is_answered_once() {
    let (mut daemon, _home, _provider) = daemon_with(&["ingress_queue_capacity=1"]).await;
    let mut burst = Vec::new();
    for id in 1000..1200 {
        let line = json!({"id": id, "method": "thread/list", "params": {}});
        burst.extend(serde_json::to_vec(&line).unwrap_or_default());
        burst.push(b'\n');
    }
    daemon.send_raw(&burst).await;
    let mut answered = std::collections::BTreeSet::new();
    let mut overloaded = 0;
    while answered.len() < 200 {
        let message = daemon.next_message().await;
        let Some(id) = message["id"].as_i64() else {
            continue;
        };
        assert!(answered.insert(id), "answered twice: {message}");
        if let Some(error) = message.get("error") {
            assert_eq!(error["code"], -32001);
            assert_eq!(error["message"], "Server overloaded; retry later.");
            assert_eq!(error["data"]["reason"], "ingress_queue_full");
            overloaded += 1;
        }
    }
    assert!(
        overloaded > 0,
        "a 200-request burst into a queue of 1 was never refused"
    );
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));
}
