//! The built-in `demo` provider: with `model_provider = "demo"` the binary starts the loopback
//! mock provider in-process and every command runs without a key or a network — `exec` streams
//! a scripted answer, and the app-server runs a turn with a command approval and a file edit.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;

use std::process::Stdio;

use exec_support::{of_type, run_exec, ExecRun};
use serde_json::{json, Value};
use support::*;
use tokio::process::Command;

/// `openturn -c model_provider=demo exec ARGS` with no key in the environment.
async fn demo_exec(home: &std::path::Path, args: &[&str]) -> ExecRun {
    let mut command = Command::new(openturn_bin());
    command
        .args(["-c", "model_provider=demo", "exec"])
        .args(args)
        .current_dir(home)
        .env("OPENTURN_HOME", home)
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    run_exec(command, "").await
}

#[tokio::test]
async fn exec_json_with_the_demo_provider_streams_an_answer_without_a_key() {
    let home = tempfile::tempdir().unwrap();
    let run = demo_exec(home.path(), &["--json", "hello"]).await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let completed = of_type(&events, "item.completed");
    let reasoning = completed
        .iter()
        .find(|event| event["item"]["type"] == "reasoning")
        .unwrap_or_else(|| panic!("no reasoning item: {events:#?}"));
    assert!(
        reasoning["item"]["text"]
            .as_str()
            .unwrap()
            .contains("Reading the request"),
        "{reasoning}"
    );
    let message = completed
        .iter()
        .find(|event| event["item"]["type"] == "agent_message")
        .unwrap_or_else(|| panic!("no message: {events:#?}"));
    let text = message["item"]["text"].as_str().unwrap();
    assert!(text.contains("built-in demo provider"), "{text}");
    assert!(text.contains("run a command"), "{text}");
    assert_eq!(of_type(&events, "turn.completed").len(), 1, "{events:#?}");
}

#[tokio::test]
async fn exec_text_with_the_demo_provider_declines_the_approvals_it_cannot_ask() {
    let home = tempfile::tempdir().unwrap();
    let run = demo_exec(home.path(), &["give me the tour"]).await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(run.stderr.contains("provider demo"), "{}", run.stderr);
    assert!(run.stderr.contains("declined"), "{}", run.stderr);
    assert!(
        run.stdout.contains("the command did not run")
            && run.stdout.contains("the patch was not applied"),
        "{}",
        run.stdout
    );
    assert!(!home.path().join("openturn-demo.txt").exists());
}

/// Answers every approval request with `accept` until the turn completes; returns the
/// notifications and the approval requests' methods.
async fn accept_until_turn_completed(daemon: &mut Daemon) -> (Vec<Value>, Vec<String>) {
    let mut notifications = Vec::new();
    let mut approvals = Vec::new();
    loop {
        let message = daemon.next_message().await;
        let method = message["method"].as_str().unwrap_or_default().to_string();
        if let Some(id) = message.get("id").filter(|_| !method.is_empty()) {
            assert!(method.ends_with("requestApproval"), "{message}");
            approvals.push(method);
            daemon
                .send(json!({"id": id, "result": {"decision": "accept"}}))
                .await;
            continue;
        }
        let done = method == "turn/completed";
        notifications.push(message);
        if done {
            return (notifications, approvals);
        }
    }
}

#[tokio::test]
async fn the_app_server_with_the_demo_provider_asks_runs_a_command_and_edits_a_file() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &["model_provider=\"demo\"".to_string()]);
    daemon.initialize().await;
    let thread_id = daemon
        .start_thread(json!({"cwd": workspace.path().display().to_string()}))
        .await;
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "run a command and edit a file"}]}),
        )
        .await;
    let (notifications, approvals) = accept_until_turn_completed(&mut daemon).await;
    assert_eq!(
        approvals,
        vec![
            "item/commandExecution/requestApproval",
            "item/fileChange/requestApproval"
        ]
    );
    let completed: Vec<&Value> = notifications
        .iter()
        .filter(|m| m["method"] == "item/completed")
        .map(|m| &m["params"]["item"])
        .collect();
    let kinds: Vec<&str> = completed
        .iter()
        .filter_map(|item| item["type"].as_str())
        .collect();
    for kind in [
        "reasoning",
        "commandExecution",
        "fileChange",
        "agentMessage",
    ] {
        assert!(kinds.contains(&kind), "no {kind} item: {kinds:?}");
    }
    let command = completed
        .iter()
        .find(|item| item["type"] == "commandExecution")
        .unwrap();
    assert_eq!(command["exitCode"], 0, "{command}");
    let written = std::fs::read_to_string(workspace.path().join("openturn-demo.txt")).unwrap();
    assert!(
        written.contains("openturn's offline demo provider"),
        "{written}"
    );
    let message = completed
        .iter()
        .find(|item| item["type"] == "agentMessage")
        .unwrap();
    let text = message["text"].as_str().unwrap();
    assert!(
        text.contains("the command ran and printed: hello from the openturn demo"),
        "{text}"
    );
    assert!(text.contains("the patch was applied"), "{text}");
    let end = notifications.last().unwrap();
    assert_eq!(end["params"]["turn"]["status"], "completed", "{end}");
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn a_thread_cannot_choose_the_demo_provider_when_the_daemon_did_not_start_it() {
    let (mut daemon, _home) = daemon_without_replies().await;
    let error = daemon
        .err(
            "thread/start",
            json!({"config": {"model_provider": "demo"}}),
        )
        .await;
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`demo` provider was not started") && message.contains("model_provider"),
        "{error}"
    );
    daemon.exit_cleanly().await;
}
