//! `command/exec` with a terminal, through the real binary: a PTY of the asked size whose
//! output streams as base64 deltas, input through `command/exec/write`, `command/exec/resize`
//! and `command/exec/terminate`; stdin streamed over pipes and closed; and the reference's
//! errors for requests it cannot run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use base64::Engine;
use serde_json::{json, Value};
use support::*;

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn decoded(messages: &[Value], process_id: &str) -> String {
    messages
        .iter()
        .filter(|m| {
            m["method"] == "command/exec/outputDelta" && m["params"]["processId"] == process_id
        })
        .map(|m| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(m["params"]["deltaBase64"].as_str().unwrap())
                .unwrap();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .collect()
}

fn unconfined() -> Value {
    json!({"type": "dangerFullAccess"})
}

#[tokio::test]
async fn a_tty_command_is_sized_written_to_resized_and_answers_when_it_exits() {
    let (mut daemon, _home) = daemon_without_replies().await;
    let script = "stty size; read line; echo got:$line; [ -t 0 ] && echo tty; stty size";
    daemon
        .send(json!({"id": 50, "method": "command/exec", "params": {
            "command": ["sh", "-c", script], "processId": "t1", "tty": true,
            "size": {"rows": 30, "cols": 100}, "sandboxPolicy": unconfined()}}))
        .await;
    let mut seen = daemon
        .collect_until(|m| decoded(std::slice::from_ref(m), "t1").contains("30 100"))
        .await;
    let resized = daemon
        .ok(
            "command/exec/resize",
            json!({"processId": "t1", "size": {"rows": 5, "cols": 7}}),
        )
        .await;
    assert_eq!(resized, json!({}));
    let written = daemon
        .ok(
            "command/exec/write",
            json!({"processId": "t1", "deltaBase64": b64("hello\n")}),
        )
        .await;
    assert_eq!(written, json!({}));
    seen.extend(daemon.collect_until(|m| m["id"] == 50).await);
    let answer = seen.last().unwrap();
    assert_eq!(
        answer["result"],
        json!({"exitCode": 0, "stdout": "", "stderr": ""})
    );
    let output = decoded(&seen, "t1");
    assert!(output.contains("got:hello"), "{output:?}");
    assert!(output.contains("tty"), "{output:?}");
    assert!(output.contains("5 7"), "{output:?}");
    // Over: the id is free, and nothing answers to it any more.
    let gone = daemon
        .err("command/exec/terminate", json!({"processId": "t1"}))
        .await;
    assert_eq!(
        gone["message"],
        "no active command/exec for process id \"t1\""
    );
}

#[tokio::test]
async fn streamed_stdin_is_closed_by_the_client_and_terminate_kills_the_command() {
    let (mut daemon, _home) = daemon_without_replies().await;
    // Ids far above the ones `request` numbers from 1: the retries below use up a varying number
    // of those, and a collision would take one request's answer for the other's.
    daemon
        .send(json!({"id": 9060, "method": "command/exec", "params": {
            "command": ["cat"], "processId": "p1", "streamStdin": true,
            "sandboxPolicy": unconfined()}}))
        .await;
    // Written before cat even reads: the pipe holds it.
    let mut written = daemon
        .request(
            "command/exec/write",
            json!({"processId": "p1", "deltaBase64": b64("abc\n"), "closeStdin": true}),
        )
        .await;
    while written.get("error").is_some() {
        // The request raced the spawn's registration: the id is not known yet.
        written = daemon
            .request(
                "command/exec/write",
                json!({"processId": "p1", "deltaBase64": b64("abc\n"), "closeStdin": true}),
            )
            .await;
    }
    let answer = daemon.response_to(json!(9060)).await;
    assert_eq!(
        answer["result"],
        json!({"exitCode": 0, "stdout": "abc\n", "stderr": ""})
    );

    daemon
        .send(json!({"id": 9061, "method": "command/exec", "params": {
            "command": ["sleep", "600"], "processId": "p2", "streamStdin": true,
            "disableTimeout": true, "sandboxPolicy": unconfined()}}))
        .await;
    // Registered once an empty write reaches it; a second command must not race it for the id.
    while daemon
        .request("command/exec/write", json!({"processId": "p2"}))
        .await
        .get("error")
        .is_some()
    {}
    let duplicate = daemon
        .err(
            "command/exec",
            json!({"command": ["true"], "processId": "p2", "sandboxPolicy": unconfined()}),
        )
        .await;
    assert_eq!(
        duplicate["message"],
        "duplicate active command/exec process id: \"p2\""
    );
    assert_eq!(
        daemon
            .ok("command/exec/terminate", json!({"processId": "p2"}))
            .await,
        json!({})
    );
    let killed = daemon.response_to(json!(9061)).await;
    assert_eq!(killed["result"]["exitCode"], 137);
}

#[tokio::test]
async fn requests_it_cannot_run_get_the_reference_errors() {
    let (mut daemon, _home) = daemon_without_replies().await;
    let cases = [
        (
            json!({"command": ["cat"], "tty": true}),
            -32600,
            "command/exec tty or streaming requires a client-supplied processId",
        ),
        (
            json!({"command": ["cat"], "streamStdin": true}),
            -32600,
            "command/exec tty or streaming requires a client-supplied processId",
        ),
        (
            json!({"command": ["cat"], "size": {"rows": 1, "cols": 1}}),
            -32602,
            "command/exec size requires tty: true",
        ),
        (
            json!({"command": ["cat"], "timeoutMs": 5, "disableTimeout": true}),
            -32602,
            "command/exec cannot set both timeoutMs and disableTimeout",
        ),
        (
            json!({"command": ["cat"], "outputBytesCap": 5, "disableOutputCap": true}),
            -32602,
            "command/exec cannot set both outputBytesCap and disableOutputCap",
        ),
    ];
    for (params, code, message) in cases {
        let error = daemon.err("command/exec", params.clone()).await;
        assert_eq!(error["code"], code, "{params}");
        assert_eq!(error["message"], message, "{params}");
    }
    for (method, params) in [
        (
            "command/exec/write",
            json!({"processId": "nope", "deltaBase64": "aGkK"}),
        ),
        (
            "command/exec/resize",
            json!({"processId": "nope", "size": {"rows": 5, "cols": 5}}),
        ),
        ("command/exec/terminate", json!({"processId": "nope"})),
    ] {
        let error = daemon.err(method, params).await;
        assert_eq!(error["code"], -32600);
        assert_eq!(
            error["message"],
            "no active command/exec for process id \"nope\""
        );
    }
}
