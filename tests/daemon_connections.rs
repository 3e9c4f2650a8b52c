//! One daemon, many clients (docs/REMOTE.md): connections over a Unix socket or TCP WebSocket
//! share threads. A new thread is announced to every initialized connection; a turn streams to
//! every subscriber; a question goes to every subscriber under its own id, the first answer
//! decides and every subscriber hears `serverRequest/resolved`; a connection that leaves or
//! falls behind never holds up the others.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod listener_support;
mod support;
mod turn_support;

use futures::StreamExt;
use listener_support::*;
use serde_json::{json, Value};
use support::*;
use tokio_tungstenite::tungstenite::Message;
use turn_support::*;

fn escalated(cmd: &str) -> Value {
    json!({"cmd": cmd, "login": false, "sandbox_permissions": "require_escalated",
        "justification": "Need to create a file"})
}

/// A provider whose first reply asks to run an escalated command, then says "after".
async fn approval_provider() -> MockProvider {
    let first = ResponseBuilder::new("r1")
        .created()
        .exec_call("fc_1", "call_1", escalated("touch approved.txt"))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["after"]);
    MockProvider::start(Script::new([first, second]))
        .await
        .unwrap()
}

/// Starts a thread on `a` (in `workdir`, approvals on request) and subscribes `b` to it with
/// `thread/resume`; returns the thread id.
async fn shared_thread(a: &mut Ws, b: &mut Ws, workdir: &std::path::Path) -> String {
    let params = json!({"approvalPolicy": "on-request", "cwd": workdir.display().to_string()});
    let response = a.request("thread/start", params).await;
    let thread_id = response["result"]["thread"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Both hear of the new thread, only `a` is subscribed.
    for ws in [&mut *a, &mut *b] {
        let started = ws.collect_until(|m| m["method"] == "thread/started").await;
        assert_eq!(
            started.last().unwrap()["params"]["thread"]["id"],
            thread_id.as_str()
        );
    }
    let resumed = b
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    assert_eq!(resumed["result"]["thread"]["id"], thread_id.as_str());
    thread_id
}

fn approval_request(messages: &[Value]) -> Value {
    messages.last().cloned().unwrap()
}

#[tokio::test]
async fn two_connections_share_a_thread_and_the_second_answers_its_approval() {
    let provider = approval_provider().await;
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let daemon = listen(
        home.path(),
        &mock_overrides(&provider),
        "ws://127.0.0.1:0",
        &[],
    )
    .await;
    let (mut a, mut b) = (daemon.connect(None).await, daemon.connect(None).await);
    a.initialize().await;
    b.initialize().await;
    let thread_id = shared_thread(&mut a, &mut b, workdir.path()).await;
    let started = a
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
        )
        .await;
    assert!(started.get("result").is_some(), "{started}");
    let asked_a = approval_request(&a.collect_until(|m| m["method"] == COMMAND_APPROVAL).await);
    let before_b = b.collect_until(|m| m["method"] == COMMAND_APPROVAL).await;
    // The turn started from `a` streams to `b` too.
    assert!(methods_of(&before_b).contains(&"turn/started".to_string()));
    let asked_b = approval_request(&before_b);
    assert_ne!(
        asked_a["id"], asked_b["id"],
        "each connection has its own id"
    );
    assert_eq!(asked_a["params"], asked_b["params"]);
    b.send(json!({"id": asked_b["id"], "result": {"decision": "accept"}}))
        .await;
    for (ws, asked) in [(&mut a, &asked_a), (&mut b, &asked_b)] {
        let resolved = ws
            .collect_until(|m| m["method"] == "serverRequest/resolved")
            .await;
        assert_eq!(resolved.last().unwrap()["params"]["requestId"], asked["id"]);
    }
    // `a` answers late, with a refusal: ignored, the command ran as `b` decided.
    a.send(json!({"id": asked_a["id"], "result": {"decision": "decline"}}))
        .await;
    for ws in [&mut a, &mut b] {
        let turn = ws.collect_until(|m| m["method"] == "turn/completed").await;
        let command = turn
            .iter()
            .find(|m| {
                m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
            })
            .unwrap();
        assert_eq!(command["params"]["item"]["status"], "completed");
    }
    assert!(workdir.path().join("approved.txt").exists());
}

fn methods_of(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_connection_killed_mid_turn_leaves_the_turn_to_the_others() {
    let provider = approval_provider().await;
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let daemon = listen(home.path(), &mock_overrides(&provider), "unix://", &[]).await;
    let (mut a, mut b) = (daemon.connect(None).await, daemon.connect(None).await);
    a.initialize().await;
    b.initialize().await;
    let thread_id = shared_thread(&mut a, &mut b, workdir.path()).await;
    a.request(
        "turn/start",
        json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
    )
    .await;
    a.collect_until(|m| m["method"] == COMMAND_APPROVAL).await;
    let asked_b = approval_request(&b.collect_until(|m| m["method"] == COMMAND_APPROVAL).await);
    // `a` goes away without a word while the turn waits on the question.
    drop(a);
    b.send(json!({"id": asked_b["id"], "result": {"decision": "accept"}}))
        .await;
    let turn = b.collect_until(|m| m["method"] == "turn/completed").await;
    assert_eq!(
        turn.last().unwrap()["params"]["turn"]["status"],
        "completed",
        "{turn:#?}"
    );
    assert!(workdir.path().join("approved.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_stops_reading_is_closed_and_the_others_keep_streaming() {
    // About 15 MB of deltas: more than a socket buffer and the connection's 8 MiB queue hold
    // together (so `slow` overflows), while `fast` only has to read faster than about half the
    // daemon's pace to stay within its own 8 MiB, however loaded the machine is.
    let deltas = mock_provider::many_deltas("r1", "msg_1", 25_000, &"x".repeat(400));
    let provider = MockProvider::start(Script::new([deltas.into()]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let daemon = listen(home.path(), &mock_overrides(&provider), "unix://", &[]).await;
    let (mut slow, mut fast) = (daemon.connect(None).await, daemon.connect(None).await);
    slow.initialize().await;
    fast.initialize().await;
    let workdir = tempfile::tempdir().unwrap();
    let thread_id = shared_thread(&mut fast, &mut slow, workdir.path()).await;
    fast.request(
        "turn/start",
        json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
    )
    .await;
    // `slow` reads nothing meanwhile; `fast` gets the whole turn. Its frames are only counted
    // here, not parsed, so this client keeps up with the daemon however loaded the machine is.
    let counting = tokio::spawn(async move {
        let mut deltas = 0;
        while let Some(Ok(frame)) = fast.ws.next().await {
            let Message::Text(text) = frame else { continue };
            if text.contains("\"method\":\"item/agentMessage/delta\"") {
                deltas += 1;
            }
            if text.contains("\"method\":\"turn/completed\"") {
                return deltas;
            }
        }
        panic!("`fast` was closed after {deltas} deltas");
    });
    let streamed = tokio::time::timeout(TIMEOUT * 3, counting)
        .await
        .expect("`fast` gets the whole turn")
        .unwrap();
    assert_eq!(streamed, 25_000);
    // `slow` reads what was queued for it, then the close that says why.
    let closed = loop {
        match slow.next_event().await {
            Next::Message(_) => continue,
            Next::Closed(frame) => break frame,
        }
    };
    let frame = closed.expect("a close frame with a reason");
    assert!(frame.reason.contains("too slow"), "{frame:?}");
}

#[tokio::test]
async fn health_origin_and_capability_tokens_are_answered_like_the_reference() {
    let home = tempfile::tempdir().unwrap();
    let token_file = home.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let provider = provider(Vec::new()).await;
    let daemon = listen(
        home.path(),
        &mock_overrides(&provider),
        "ws://127.0.0.1:0",
        &[
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            token_file.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(daemon.http_get("/readyz", "").await, "HTTP/1.1 200 OK");
    assert_eq!(daemon.try_connect(None, &[]).await.err(), Some(401));
    assert_eq!(
        daemon.try_connect(Some("wrong"), &[]).await.err(),
        Some(401)
    );
    let origin = [("origin", "http://localhost")];
    assert_eq!(
        daemon
            .try_connect(Some("s3cret-token"), &origin)
            .await
            .err(),
        Some(403)
    );
    let mut ws = daemon.try_connect(Some("s3cret-token"), &[]).await.unwrap();
    ws.initialize().await;
    let logged = daemon.stderr.lock().unwrap().join("\n");
    assert!(!logged.contains("s3cret-token") && !logged.contains("wrong"));
}

#[tokio::test]
async fn signed_bearer_tokens_need_the_secret_and_a_future_expiry() {
    use jsonwebtoken::{encode, EncodingKey, Header};
    let home = tempfile::tempdir().unwrap();
    let secret_file = home.path().join("secret");
    std::fs::write(&secret_file, "shared-secret").unwrap();
    let provider = provider(Vec::new()).await;
    let daemon = listen(
        home.path(),
        &mock_overrides(&provider),
        "ws://127.0.0.1:0",
        &[
            "--ws-auth",
            "signed-bearer-token",
            "--ws-shared-secret-file",
            secret_file.to_str().unwrap(),
            "--ws-audience",
            "openturn",
            "--ws-max-clock-skew-seconds",
            "0",
        ],
    )
    .await;
    let now = chrono::Utc::now().timestamp();
    let token = |secret: &[u8], exp: i64| {
        let claims = json!({"aud": "openturn", "exp": exp, "sub": "tests"});
        encode(
            &Header::default(),
            &claims,
            &EncodingKey::from_secret(secret),
        )
        .unwrap()
    };
    let expired = token(b"shared-secret", now - 120);
    let forged = token(b"other-secret", now + 120);
    assert_eq!(
        daemon.try_connect(Some(&expired), &[]).await.err(),
        Some(401)
    );
    assert_eq!(
        daemon.try_connect(Some(&forged), &[]).await.err(),
        Some(401)
    );
    let good = token(b"shared-secret", now + 120);
    let mut ws = daemon.try_connect(Some(&good), &[]).await.unwrap();
    ws.initialize().await;
}

#[tokio::test]
async fn a_non_loopback_address_needs_authentication() {
    let home = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(openturn_bin())
        .args(["app-server", "--listen", "ws://0.0.0.0:0"])
        .env("OPENTURN_HOME", home.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without auth"), "{stderr}");
}

#[tokio::test]
async fn a_stale_socket_is_replaced_and_a_live_one_refuses_a_second_daemon() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let provider = provider(Vec::new()).await;
    let overrides = mock_overrides(&provider);
    let mut first = listen(home.path(), &overrides, "unix://", &[]).await;
    let socket = first.socket_path();
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(socket.parent().unwrap()), 0o700);
    let second = std::process::Command::new(openturn_bin())
        .args(["app-server", "--listen", "unix://"])
        .env("OPENTURN_HOME", home.path())
        .output()
        .unwrap();
    assert!(!second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("already listening"));
    // Killed outright, the daemon leaves its socket behind.
    first.child.kill().await.unwrap();
    first.child.wait().await.unwrap();
    assert!(socket.exists());
    let mut third = listen(home.path(), &overrides, "unix://", &[]).await;
    assert_eq!(third.http_get("/readyz", "").await, "HTTP/1.1 200 OK");
    let mut ws = third.connect(None).await;
    ws.initialize().await;
    third.terminate();
    assert_eq!(third.wait_exit().await, Some(0));
    assert!(!socket.exists(), "the socket is removed at exit");
}

// Multi-threaded: the test waits on child processes synchronously while the mock provider
// serves them from this runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_runs_its_turn_on_a_remote_daemon_with_a_token() {
    let provider = provider(vec![text_reply(1, "remote answer")]).await;
    let home = tempfile::tempdir().unwrap();
    let token_file = home.path().join("token");
    std::fs::write(&token_file, "exec-token").unwrap();
    let daemon = listen(
        home.path(),
        &mock_overrides(&provider),
        "ws://127.0.0.1:0",
        &[
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            token_file.to_str().unwrap(),
        ],
    )
    .await;
    // The exec process has no provider configured: the daemon's is used.
    let exec_home = tempfile::tempdir().unwrap();
    let run = |var: &str| {
        std::process::Command::new(openturn_bin())
            .args([
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--remote",
                &daemon.url,
            ])
            .args(["--remote-auth-token-env", var, "say something"])
            .env("OPENTURN_HOME", exec_home.path())
            .env("DAEMON_TOKEN", "exec-token")
            .env("BAD_TOKEN", "nope")
            .output()
            .unwrap()
    };
    let refused = run("BAD_TOKEN");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("401"));
    let output = run("DAEMON_TOKEN");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let answer = events
        .iter()
        .find(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .unwrap();
    assert_eq!(answer["item"]["text"], "remote answer");
    assert!(events.iter().any(|e| e["type"] == "turn.completed"));
}

#[tokio::test]
async fn an_unsubscribed_connection_hears_lifecycle_but_no_turn_traffic() {
    let provider = provider(vec![text_reply(1, "only for a")]).await;
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let daemon = listen(home.path(), &mock_overrides(&provider), "unix://", &[]).await;
    let (mut a, mut b) = (daemon.connect(None).await, daemon.connect(None).await);
    a.initialize().await;
    b.initialize().await;
    let thread_id = shared_thread(&mut a, &mut b, workdir.path()).await;
    let unsubscribed = b
        .request("thread/unsubscribe", json!({"threadId": thread_id}))
        .await;
    assert_eq!(unsubscribed["result"]["status"], "unsubscribed");
    a.request(
        "turn/start",
        json!({"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}),
    )
    .await;
    a.collect_until(|m| m["method"] == "turn/completed").await;
    // Everything `b` heard meanwhile comes before the answer to a request it sends now.
    b.send(json!({"id": 99, "method": "thread/loaded/list", "params": {}}))
        .await;
    let heard = b.collect_until(|m| m["id"] == 99).await;
    let methods = methods_of(&heard);
    assert!(
        methods
            .iter()
            .all(|m| !m.starts_with("turn/") && !m.starts_with("item/")),
        "{methods:?}"
    );
    assert!(
        methods.contains(&"thread/status/changed".to_string()),
        "{methods:?}"
    );
}

/// The daemon writes its frames itself and leaves reading to tungstenite, whose replies reach
/// the socket through the writer: a ping is answered with its payload between the responses,
/// and a client's close gets a close back and then the end of the stream.
#[tokio::test]
async fn pings_are_answered_and_a_clients_close_is_returned() {
    use futures::SinkExt;
    let home = tempfile::tempdir().unwrap();
    let provider = provider(Vec::new()).await;
    let daemon = listen(
        home.path(),
        &mock_overrides(&provider),
        "ws://127.0.0.1:0",
        &[],
    )
    .await;
    let mut client = daemon.connect(None).await;
    client.initialize().await;
    client
        .ws
        .send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    let pong = loop {
        let frame = tokio::time::timeout(TIMEOUT, client.ws.next())
            .await
            .expect("a frame within the timeout")
            .expect("the stream is open")
            .unwrap();
        if let Message::Pong(payload) = frame {
            break payload;
        }
    };
    assert_eq!(&pong[..], b"are you there");
    // The connection still answers requests after the pong.
    let models = client.request("model/list", json!({})).await;
    assert!(models.get("result").is_some(), "{models}");
    client.ws.send(Message::Close(None)).await.unwrap();
    let mut saw_close = false;
    while let Some(frame) = tokio::time::timeout(TIMEOUT, client.ws.next())
        .await
        .expect("the close within the timeout")
    {
        match frame {
            Ok(Message::Close(_)) => saw_close = true,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    assert!(saw_close, "the daemon answered the client's close");
}
