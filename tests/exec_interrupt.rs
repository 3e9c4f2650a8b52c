//! SIGINT or SIGTERM during `openturn exec` interrupts the turn cleanly, and exec ends as the
//! reference's `codex exec` does: no end event for the turn (no `turn.failed`), exit code 1
//! after SIGINT, killed by the signal after SIGTERM. The rollout records the turn as interrupted
//! either way — the in-process server shuts down exactly as the app-server does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;

use std::time::Duration;

use exec_support::*;
use serde_json::Value;
use support::*;
use tokio::io::{AsyncBufReadExt, BufReader};

/// How the run must end after the signal.
enum Ending {
    Code(i32),
    KilledBy(i32),
}

async fn interrupted_by(signal: i32, name: &str, ending: Ending) {
    let provider =
        MockProvider::start(Script::new([stalled_text_reply("msg_p", &["par", "tial"])]))
            .await
            .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = exec_command(home.path(), &provider, &["--json", "--stream", "go"]);
    command.stdin(std::process::Stdio::null());
    let mut child = command.spawn().expect("spawn");
    let stdout = child.stdout.take().expect("no stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut events: Vec<Value> = Vec::new();
    // Wait until the answer is streaming, so the signal lands mid-turn.
    while !events.iter().any(|e| e["type"] == "item.updated") {
        let line = tokio::time::timeout(TIMEOUT, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no streaming event in time: {events:#?}"))
            .unwrap()
            .unwrap_or_else(|| panic!("stdout closed early: {events:#?}"));
        events.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    let pid = child.id().expect("no pid");
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(pid as i32, signal);
    }
    while let Some(line) = tokio::time::timeout(TIMEOUT, lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("exec did not finish after {name}: {events:#?}"))
        .unwrap()
    {
        events.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    let status = tokio::time::timeout(Duration::from_secs(8), child.wait())
        .await
        .unwrap_or_else(|_| panic!("exec did not exit after {name}"))
        .unwrap();
    match ending {
        Ending::Code(code) => assert_eq!(status.code(), Some(code), "{status:?} {events:#?}"),
        Ending::KilledBy(killer) => assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(killer),
            "{status:?} {events:#?}"
        ),
    }
    for event in &events {
        check_event(event);
    }
    check_order(&events);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e["type"].as_str(), Some("turn.failed" | "turn.completed"))),
        "an interrupted run prints no end event: {events:#?}"
    );
    let thread_id = events[0]["thread_id"].as_str().unwrap_or_default();
    assert_one_turn_recorded_interrupted(home.path(), thread_id);
}

#[tokio::test]
async fn sigint_interrupts_the_turn_records_it_and_exits_1() {
    interrupted_by(libc::SIGINT, "SIGINT", Ending::Code(1)).await;
}

#[tokio::test]
async fn sigterm_interrupts_the_turn_records_it_and_dies_by_sigterm() {
    interrupted_by(libc::SIGTERM, "SIGTERM", Ending::KilledBy(libc::SIGTERM)).await;
}
