//! What an approval rule judges is what runs: the model cannot pick the program that runs its
//! command (a `shell` argument is ignored; the user's shell runs every command, so a read-only
//! `cmd` stays read-only), and an "accept for session" answer covers the same command line in
//! the same working directory only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

#[tokio::test]
async fn a_shell_chosen_by_the_model_never_runs() {
    let workdir = tempfile::tempdir().unwrap();
    // A "shell" that writes a file before doing what it was asked: had it run, `ls` (which
    // `untrusted` runs unasked) would have written with no approval.
    let fake_shell = workdir.path().join("fake-shell");
    let marker = workdir.path().join("fake-shell-ran");
    write_executable(
        &fake_shell,
        &format!(
            "#!/bin/sh\ntouch '{}'\nexec /bin/sh \"$@\"\n",
            marker.display()
        ),
    );
    let call = |b: ResponseBuilder| {
        b.exec_call(
            "fc_1",
            "call_1",
            json!({"cmd": "ls", "shell": fake_shell.display().to_string(), "login": false}),
        )
    };
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(call)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["after"]),
    ]);
    let params =
        json!({"approvalPolicy": "untrusted", "cwd": workdir.path().display().to_string()});
    let mut s = session(script, &[], params).await;
    let all = s.run_turn("list").await;
    single_turn_end(&all, "completed");
    assert!(params_of(&all, COMMAND_APPROVAL).is_empty());
    let item = items_of(&all, "item/completed", "commandExecution")[0].clone();
    assert_eq!(item["status"], "completed");
    assert!(
        !item["command"]
            .as_str()
            .unwrap_or_default()
            .contains("fake-shell"),
        "{item}"
    );
    // `ls` ran (its output lists the fake shell) — with the user's shell, not the model's.
    assert!(item["aggregatedOutput"]
        .as_str()
        .is_some_and(|out| out.contains("fake-shell")));
    assert!(!marker.exists(), "the model-chosen shell ran");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert!(
        outputs[0].1.contains("`shell` argument") && outputs[0].1.contains("ignored"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn accept_for_session_covers_the_same_command_in_the_same_directory_only() {
    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let call = |b: ResponseBuilder, n: u32, dir: &std::path::Path| {
        b.exec_call(
            &format!("fc_{n}"),
            &format!("call_{n}"),
            json!({"cmd": "touch scoped.txt", "login": false, "workdir": dir.display().to_string()}),
        )
    };
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(|b| call(b, 1, dir_a.path()))
            .completed(Usage::small(), None)
            .build(),
        ResponseBuilder::new("r2")
            .created()
            .with(|b| call(b, 2, dir_b.path()))
            .completed(Usage::small(), None)
            .build(),
        ResponseBuilder::new("r3")
            .created()
            .with(|b| call(b, 3, dir_a.path()))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r4", "msg_f", &["done"]),
    ]);
    // workspace-write: an approved command runs confined, and the thread's cwd (A) is writable.
    let params = json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write",
        "cwd": dir_a.path().display().to_string()});
    let mut s = session(script, &[], params).await;
    s.start_turn("touch", json!({})).await;
    let all = s
        .answer_approvals(4, |request| {
            // Approve for the session in A; decline in B.
            if request["params"]["cwd"] == dir_a.path().display().to_string() {
                "acceptForSession"
            } else {
                "decline"
            }
        })
        .await;
    single_turn_end(&all, "completed");
    let asked: Vec<(Value, Value)> = params_of(&all, COMMAND_APPROVAL)
        .iter()
        .map(|p| (p["itemId"].clone(), p["cwd"].clone()))
        .collect();
    assert_eq!(
        asked,
        vec![
            (json!("call_1"), json!(dir_a.path().display().to_string())),
            (json!("call_2"), json!(dir_b.path().display().to_string())),
        ],
        "approved in A, the same command in B is asked about again; in A again it is not"
    );
    let statuses: Vec<(Value, Value)> = items_of(&all, "item/completed", "commandExecution")
        .iter()
        .map(|item| (item["id"].clone(), item["status"].clone()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (json!("call_1"), json!("completed")),
            (json!("call_2"), json!("declined")),
            (json!("call_3"), json!("completed")),
        ]
    );
    assert!(dir_a.path().join("scoped.txt").exists());
    assert!(!dir_b.path().join("scoped.txt").exists());
}
