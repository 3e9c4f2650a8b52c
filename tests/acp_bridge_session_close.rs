//! An editor closing a session through the ACP bridge (`session/close`): the bridge lists the
//! thread's background terminals, terminates each, and unsubscribes from the thread. Against
//! openturn every one of those calls succeeds, the close answers without an error, and the
//! command the model left running is gone — as is everything else once the bridge exits.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod acp_support;
mod support;
mod turn_support;

use serde_json::{json, Value};

use acp_support::*;
use support::*;
use turn_support::*;

/// The app-server requests the bridge sent with `method`, each with openturn's answer.
fn calls(home: &std::path::Path, method: &str) -> Vec<(Value, Value)> {
    let sent = recorded(&home.join("bridge-in.jsonl"));
    let answers = recorded(&home.join("bridge-out.jsonl"));
    sent.iter()
        .filter(|m| m["method"] == method && m.get("id").is_some())
        .map(|request| {
            let answer = answers
                .iter()
                .find(|m| m.get("method").is_none() && m["id"] == request["id"])
                .cloned()
                .unwrap_or(Value::Null);
            (request["params"].clone(), answer)
        })
        .collect()
}

#[tokio::test]
async fn closing_a_session_through_the_bridge_stops_its_background_terminal() {
    let Some(entry) = bridge_or_skip() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let pid_file = root.join("leader.pid");
    let cmd = format!(
        "echo $$ > {}; echo serving; exec sleep 600",
        pid_file.display()
    );
    let provider = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .exec_call(
                "fc1",
                "call_serve",
                json!({"cmd": cmd, "yield_time_ms": 250, "login": false}),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m2", &["Left it serving"]),
        // The bridge asks for a title after the first turn, in a thread of its own.
        message_reply("r_title", "m_title", &["{\"title\": \"Serving\"}"]),
    ]))
    .await
    .unwrap();
    write_config(home.path(), &provider);
    // The pid file must hold a host pid, which a command in a PID namespace of its own cannot
    // know: the sandbox runs commands in its fallback (Landlock and seccomp, no namespaces).
    let config = home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("sandbox_isolation = \"fallback\"\n{text}")).unwrap();

    let mut client = AcpClient::spawn(&entry, home.path());
    client.initialize().await;
    let session_id = client.new_session(&root.display().to_string()).await;
    let (result, _) = client
        .ok(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Serve it"}]}),
        )
        .await;
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let leader = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(!process_is_dead(&leader), "{leader} ended with its turn");

    let (closed, _) = client
        .ok("session/close", json!({"sessionId": session_id}))
        .await;
    assert_eq!(closed, json!({}), "{}", client.context());
    assert!(
        poll_until(|| process_is_dead(&leader)).await,
        "{leader} outlived its closed session"
    );
    // What the bridge asked of openturn to close it, each answered without an error.
    let listed = calls(home.path(), "thread/backgroundTerminals/list");
    assert!(!listed.is_empty(), "the bridge never listed the terminals");
    let first_page = &listed[0].1["result"]["data"];
    assert_eq!(first_page.as_array().map(Vec::len), Some(1), "{listed:?}");
    assert_eq!(first_page[0]["command"], cmd.as_str());
    assert_eq!(first_page[0]["osPid"], leader.parse::<u64>().unwrap());
    let terminated = calls(home.path(), "thread/backgroundTerminals/terminate");
    assert_eq!(terminated.len(), 1, "{terminated:?}");
    assert_eq!(terminated[0].1["result"], json!({"terminated": true}));
    let unsubscribed = calls(home.path(), "thread/unsubscribe");
    assert_eq!(unsubscribed.len(), 1, "{unsubscribed:?}");
    assert_eq!(unsubscribed[0].1["result"]["status"], "unsubscribed");
    for (params, answer) in listed.iter().chain(&terminated).chain(&unsubscribed) {
        assert!(answer.get("error").is_none(), "{params} → {answer}");
    }

    // The bridge is still at work after the close.
    let (listed_sessions, _) = client
        .ok("session/list", json!({"cwd": root.display().to_string()}))
        .await;
    assert!(listed_sessions["sessions"].is_array(), "{listed_sessions}");
    client.shutdown().await;
    assert!(process_is_dead(&leader));
}
