//! The model's commands as sessions, through the real binary: a command still running when its
//! `exec_command` call yields stays alive; `write_stdin` answers its prompt on a PTY (and is
//! refused without one, where stdin is closed); the command keeps one item whose writes are
//! `terminalInteraction`s and which completes when the process exits; a command still running
//! at the turn's end is a background terminal that clients list and terminate, and that dies
//! with the thread's daemon — while processes that are not the command's live on.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use openturn::mock_provider::{RecordedRequest, Responder};
use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The session id the last function call output of `request` names, if it names one.
fn session_in(request: &RecordedRequest) -> Option<i64> {
    let output = request.body["input"]
        .as_array()?
        .iter()
        .rev()
        .find(|item| item["type"] == "function_call_output")?["output"]
        .as_str()?
        .to_string();
    let (_, rest) = output.split_once("Process running with session ID ")?;
    rest.lines().next()?.trim().parse().ok()
}

fn calls_made(request: &RecordedRequest) -> usize {
    request.body["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|item| item["type"] == "function_call")
                .count()
        })
        .unwrap_or(0)
}

fn call(n: usize, name: &str, arguments: Value) -> openturn::mock_provider::Reply {
    ResponseBuilder::new(format!("r{n}"))
        .created()
        .function_call_json(&format!("fc_{n}"), &format!("call_{n}"), name, arguments)
        .completed(Usage::small(), None)
        .build()
}

/// A model that starts `exec`, then writes `chars` to the session it was told about, then
/// answers with a message.
fn scripted_model(exec: Value, chars: &'static str) -> Script {
    Script::answering(Responder::new(move |request| {
        match (calls_made(request), session_in(request)) {
            (0, _) => call(0, "exec_command", exec.clone()),
            (1, Some(id)) => call(
                1,
                "write_stdin",
                json!({"session_id": id, "chars": chars, "yield_time_ms": 30000}),
            ),
            _ => message_reply("r_last", "msg_last", &["done"]),
        }
    }))
}

async fn experimental_session(script: Script, cwd: &Path) -> Session {
    let provider = MockProvider::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon
        .request(
            "initialize",
            json!({"clientInfo": {"name": "t", "version": "1"},
                   "capabilities": {"experimentalApi": true}}),
        )
        .await;
    daemon.send(json!({"method": "initialized"})).await;
    let params = json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
        "cwd": cwd.display().to_string()});
    let thread_id = daemon.start_thread(params).await;
    assert_eq!(daemon.next_message().await["method"], "thread/started");
    Session {
        provider,
        home,
        daemon,
        thread_id,
    }
}

#[tokio::test]
async fn a_prompt_on_a_pty_is_answered_through_write_stdin_within_one_item() {
    let workdir = tempfile::tempdir().unwrap();
    let cmd = "printf 'name? '; read name; [ -t 0 ] && echo on-a-tty; echo hello $name";
    let exec = json!({"cmd": cmd, "tty": true, "yield_time_ms": 250, "login": false});
    let mut s = experimental_session(scripted_model(exec, "bob\n"), workdir.path()).await;
    let turn = s.run_turn("ask me").await;
    single_turn_end(&turn, "completed");

    let started = items_of(&turn, "item/started", "commandExecution");
    let completed = items_of(&turn, "item/completed", "commandExecution");
    assert_eq!(
        (started.len(), completed.len()),
        (1, 1),
        "one item per session"
    );
    let process_id = started[0]["processId"].as_str().unwrap().to_string();
    assert_eq!(completed[0]["processId"], process_id.as_str());
    assert_eq!(completed[0]["status"], "completed");
    assert_eq!(completed[0]["exitCode"], 0);
    let aggregated = completed[0]["aggregatedOutput"].as_str().unwrap();
    assert!(aggregated.contains("on-a-tty"), "{aggregated:?}");
    assert!(aggregated.contains("hello bob"), "{aggregated:?}");
    // The PTY's line discipline echoes what was typed.
    assert!(aggregated.contains("bob\r\n"), "{aggregated:?}");

    let interactions = params_of(&turn, "item/commandExecution/terminalInteraction");
    assert_eq!(interactions.len(), 1);
    assert_eq!(interactions[0]["itemId"], "call_0");
    assert_eq!(interactions[0]["processId"], process_id.as_str());
    assert_eq!(interactions[0]["stdin"], "bob\n");

    let bodies = s.bodies(3).await;
    let first = &call_outputs(&bodies[1])[0].1;
    assert!(
        first.contains(&format!("Process running with session ID {process_id}\n")),
        "{first}"
    );
    assert!(first.starts_with("Chunk ID: "), "{first}");
    let second = call_outputs(&bodies[2]).last().unwrap().1.clone();
    assert!(second.contains("Process exited with code 0\n"), "{second}");
    assert!(second.contains("hello bob"), "{second}");
    let tools: Vec<&Value> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["name"] == "write_stdin" || tool["name"] == "exec_command")
        .collect();
    assert_eq!(tools.len(), 2);
    let exec_properties = tools[0]["parameters"]["properties"].as_object().unwrap();
    for name in ["tty", "yield_time_ms", "max_output_tokens", "prefix_rule"] {
        assert!(exec_properties.contains_key(name), "{name}");
    }
    assert!(!exec_properties.contains_key("timeout_ms"));
}

#[tokio::test]
async fn without_a_tty_stdin_is_closed_and_a_write_is_refused_with_the_reason() {
    let workdir = tempfile::tempdir().unwrap();
    // With pipes the prompt reads end-of-file at once; the command then waits to be polled.
    let cmd = "read name; echo got:$name; exec sleep 600";
    let exec = json!({"cmd": cmd, "yield_time_ms": 250, "login": false});
    let mut s = experimental_session(scripted_model(exec, "bob\n"), workdir.path()).await;
    let turn = s.run_turn("ask me").await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(3).await;
    let refused = call_outputs(&bodies[2]).last().unwrap().1.clone();
    assert_eq!(
        refused,
        "write_stdin failed: stdin is closed for this session; rerun exec_command with \
         tty=true to keep stdin open"
    );
    assert!(
        joined_deltas(&turn, "item/commandExecution/outputDelta").contains("got:\n"),
        "{turn:#?}"
    );
    assert!(items_of(&turn, "item/completed", "commandExecution").is_empty());
    s.daemon.close_stdin();
    assert_eq!(s.daemon.wait_exit().await, Some(0));
}

#[tokio::test]
async fn a_background_terminal_outlives_its_turn_until_a_client_terminates_it() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    // A process that is not the command's: it must survive everything below.
    let mut unrelated = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let cmd = "echo $$ > leader.pid; sleep 600 & echo $! > child.pid; echo started; wait";
    let script = Script::new([
        call(
            0,
            "exec_command",
            json!({"cmd": cmd, "yield_time_ms": 250, "login": false}),
        ),
        message_reply("r1", "msg_1", &["left it running"]),
    ]);
    let mut s = experimental_session(script, dir).await;
    let turn = s.run_turn("start a server").await;
    single_turn_end(&turn, "completed");
    assert!(items_of(&turn, "item/completed", "commandExecution").is_empty());
    let started = items_of(&turn, "item/started", "commandExecution");
    let process_id = started[0]["processId"].as_str().unwrap().to_string();
    let pids: Vec<String> = ["leader.pid", "child.pid"]
        .iter()
        .map(|file| {
            std::fs::read_to_string(dir.join(file))
                .unwrap()
                .trim()
                .to_string()
        })
        .collect();
    assert!(pids.iter().all(|pid| !process_is_dead(pid)), "{pids:?}");

    let thread_id = s.thread_id.clone();
    let list = s
        .daemon
        .ok(
            "thread/backgroundTerminals/list",
            json!({"threadId": thread_id, "limit": 1}),
        )
        .await;
    let mut listed = list["data"].clone();
    // What it costs is read from /proc: a number, whatever its value.
    let usage = listed[0].as_object_mut().unwrap();
    assert!(usage.remove("cpuPercent").unwrap().is_f64(), "{list}");
    assert!(
        usage.remove("rssKb").unwrap().as_u64().unwrap() > 0,
        "{list}"
    );
    assert_eq!(
        listed,
        json!([{"itemId": "call_0", "processId": process_id, "command": cmd,
                "cwd": dir.display().to_string(), "osPid": pids[0].parse::<u32>().unwrap()}])
    );
    assert_eq!(list["nextCursor"], Value::Null);
    let terminated = s
        .daemon
        .ok(
            "thread/backgroundTerminals/terminate",
            json!({"threadId": thread_id, "processId": process_id}),
        )
        .await;
    assert_eq!(terminated, json!({"terminated": true}));
    let completion = s
        .daemon
        .collect_until(|m| m["method"] == "item/completed")
        .await;
    let item = &completion.last().unwrap()["params"]["item"];
    assert_eq!(item["status"], "failed");
    assert_eq!(item["exitCode"], -1);
    assert!(item["aggregatedOutput"]
        .as_str()
        .unwrap()
        .contains("started"));
    for pid in &pids {
        assert!(poll_until(|| process_is_dead(pid)).await, "{pid} survived");
    }
    let again = s
        .daemon
        .ok(
            "thread/backgroundTerminals/terminate",
            json!({"threadId": thread_id, "processId": process_id}),
        )
        .await;
    assert_eq!(again, json!({"terminated": false}));
    let empty = s
        .daemon
        .ok(
            "thread/backgroundTerminals/list",
            json!({"threadId": thread_id}),
        )
        .await;
    assert_eq!(empty, json!({"data": [], "nextCursor": null}));
    let bad = s
        .daemon
        .err(
            "thread/backgroundTerminals/list",
            json!({"threadId": thread_id, "cursor": "zzz"}),
        )
        .await;
    assert_eq!(
        bad["message"],
        "invalid cursor: invalid digit found in string"
    );
    assert!(
        unrelated.try_wait().unwrap().is_none(),
        "an unrelated process died"
    );
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

#[tokio::test]
async fn background_terminals_die_with_the_daemon_and_need_the_experimental_capability() {
    let workdir = tempfile::tempdir().unwrap();
    let dir = workdir.path();
    let cmd = "echo $$ > leader.pid; exec sleep 600";
    let script = Script::new([
        call(
            0,
            "exec_command",
            json!({"cmd": cmd, "yield_time_ms": 250, "login": false}),
        ),
        message_reply("r1", "msg_1", &["left it running"]),
    ]);
    let mut s = session(
        script,
        &[],
        json!({"approvalPolicy": "never", "sandbox": "danger-full-access",
               "cwd": dir.display().to_string()}),
    )
    .await;
    let turn = s.run_turn("start").await;
    single_turn_end(&turn, "completed");
    let refused = s
        .daemon
        .err(
            "thread/backgroundTerminals/list",
            json!({"threadId": s.thread_id}),
        )
        .await;
    assert_eq!(refused["code"], -32600);
    assert_eq!(
        refused["message"],
        "thread/backgroundTerminals/list requires experimentalApi capability"
    );
    let pid = std::fs::read_to_string(dir.join("leader.pid")).unwrap();
    let pid = pid.trim().to_string();
    assert!(!process_is_dead(&pid));
    s.daemon.close_stdin();
    assert_eq!(s.daemon.wait_exit().await, Some(0));
    assert!(
        poll_until(|| process_is_dead(&pid)).await,
        "{pid} outlived the daemon"
    );
}
