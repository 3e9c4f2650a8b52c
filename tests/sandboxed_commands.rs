//! Commands the model runs are confined by the thread's sandbox, through the real daemon and
//! real child processes: under `read-only` nothing is written; under `workspace-write` only the
//! thread's cwd is, never its `.git` nor openturn's home; with the network off a loopback TCP
//! connection is refused; a command the model asks to run outside the sandbox runs there only
//! when the user approves it, and a declined one never runs.
//!
//! These tests need a kernel that can enforce the sandbox (Landlock ABI 3+, seccomp); on one that
//! cannot, the same commands are refused instead (unit-tested in `core::tools::shell`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn shell_call(response: ResponseBuilder, n: usize, cmd: &str) -> ResponseBuilder {
    response.exec_call(
        &format!("fc_{n}"),
        &format!("call_{n}"),
        json!({"cmd": cmd, "login": false}),
    )
}

/// One turn running `cmds` (each its own call, in order) under `params` with approval
/// `never`, in `cwd`; the statuses of the items and the outputs the model got, in call order.
async fn run_commands(params: Value, cwd: &Path, cmds: &[&str]) -> (Session, Vec<(Value, String)>) {
    let calls = |response: ResponseBuilder| {
        cmds.iter()
            .enumerate()
            .fold(response, |response, (n, cmd)| shell_call(response, n, cmd))
    };
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(calls)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["done"]),
    ]);
    let mut params = params;
    params["approvalPolicy"] = json!("never");
    params["cwd"] = json!(cwd.display().to_string());
    let mut s = session(script, &[], params).await;
    let all = s.run_turn("go").await;
    single_turn_end(&all, "completed");
    assert!(
        params_of(&all, COMMAND_APPROVAL).is_empty(),
        "nobody is asked"
    );
    let items = items_of(&all, "item/completed", "commandExecution");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    let results = (0..cmds.len())
        .map(|n| {
            let id = format!("call_{n}");
            let status = items
                .iter()
                .find(|item| item["id"] == id.as_str())
                .map(|item| item["status"].clone())
                .unwrap_or(Value::Null);
            let output = outputs
                .iter()
                .find(|(call, _)| *call == id)
                .map(|(_, text)| text.clone())
                .unwrap_or_default();
            (status, output)
        })
        .collect();
    (s, results)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[tokio::test]
async fn read_only_runs_commands_but_no_write_lands() {
    let workdir = tempdir();
    std::fs::write(workdir.path().join("notes.txt"), "kept\n").unwrap();
    let (_s, results) = run_commands(
        json!({"sandbox": "read-only"}),
        workdir.path(),
        &[
            "cat notes.txt | tr a-z A-Z",
            "echo x > made.txt",
            "echo gone > notes.txt",
        ],
    )
    .await;
    // A command with shell syntax runs (it only reads) instead of being refused.
    assert_eq!(results[0].0, "completed", "{}", results[0].1);
    assert!(results[0].1.contains("KEPT"), "{}", results[0].1);
    for (status, output) in &results[1..] {
        assert_eq!(status, "failed", "{output}");
        // Landlock (fallback) or the read-only mount (namespaces).
        assert!(
            output.contains("Permission denied") || output.contains("Read-only file system"),
            "{output}"
        );
    }
    assert!(!workdir.path().join("made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(workdir.path().join("notes.txt")).unwrap_or_default(),
        "kept\n"
    );
}

#[tokio::test]
async fn workspace_write_writes_the_cwd_only_and_never_git_or_the_openturn_home() {
    let workdir = tempdir();
    let outside = tempdir();
    std::fs::create_dir_all(workdir.path().join(".git")).unwrap();
    std::fs::write(workdir.path().join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(workdir.path().join("src")).unwrap();
    let outside_file = outside.path().join("escaped.txt");
    let (s, results) = run_commands(
        json!({"sandbox": "workspace-write"}),
        workdir.path(),
        &[
            "echo in > src/inside.txt",
            &format!("echo out > {}", outside_file.display()),
            "echo '[core] hooksPath=/tmp' >> .git/config",
            "touch .git/hooks-pre-commit",
        ],
    )
    .await;
    assert_eq!(results[0].0, "completed", "{}", results[0].1);
    assert!(workdir.path().join("src/inside.txt").exists());
    for (status, output) in &results[1..] {
        assert_eq!(status, "failed", "{output}");
    }
    assert!(!outside_file.exists(), "outside the cwd is not writable");
    assert_eq!(
        std::fs::read_to_string(workdir.path().join(".git/config")).unwrap_or_default(),
        "[core]\n",
        ".git is not writable"
    );
    assert!(!workdir.path().join(".git/hooks-pre-commit").exists());
    // openturn's home (config, rollouts) is never writable, even as the thread's cwd.
    let home = s.home.path().to_path_buf();
    drop(s);
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(|b| shell_call(b, 0, "echo x > planted.toml"))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["done"]),
    ]);
    let provider = MockProvider::start(script).await.unwrap();
    let mut daemon = Daemon::spawn(&home, &mock_overrides(&provider));
    daemon.initialize().await;
    let thread_id = daemon
        .start_thread(
            json!({"approvalPolicy": "never", "sandbox": "workspace-write",
                             "cwd": home.display().to_string()}),
        )
        .await;
    let all = text_turn(&mut daemon, &thread_id, "go").await;
    let items = items_of(&all, "item/completed", "commandExecution");
    assert_eq!(items[0]["status"], "failed", "{:?}", items[0]);
    assert!(
        !home.join("planted.toml").exists(),
        "openturn's home is protected"
    );
}

#[tokio::test]
async fn read_only_refuses_a_loopback_connection_that_full_access_makes() {
    for (sandbox, connects) in [("read-only", false), ("danger-full-access", true)] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        let workdir = tempdir();
        let cmd = format!("bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}'");
        let (_s, results) =
            run_commands(json!({"sandbox": sandbox}), workdir.path(), &[&cmd]).await;
        let accepted = if connects {
            // The connection the command made is waited for, within the suite's bound.
            tokio::time::timeout(TIMEOUT, listener.accept())
                .await
                .is_ok()
        } else {
            // The command has ended, so a connection it made would be in the listener's
            // queue already (its connect returned only once the handshake was done): one
            // non-blocking accept tells, with no moment to wait out.
            match listener.into_std().unwrap().accept() {
                Ok(_) => true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
                Err(e) => panic!("accept: {e}"),
            }
        };
        assert_eq!(accepted, connects, "{sandbox}: {}", results[0].1);
        let expected = if connects { "completed" } else { "failed" };
        assert_eq!(results[0].0, expected, "{sandbox}: {}", results[0].1);
    }
}

#[tokio::test]
async fn an_approved_escalation_runs_outside_the_sandbox_and_a_declined_one_never_runs() {
    let workdir = tempdir();
    let escalated = |response: ResponseBuilder, n: usize, file: &str| {
        response.exec_call(
            &format!("fc_{n}"),
            &format!("call_{n}"),
            json!({"cmd": format!("echo x > {file}"), "login": false,
                   "sandbox_permissions": "require_escalated",
                   "justification": "needs to write"}),
        )
    };
    let calls = |b| escalated(escalated(b, 0, "approved.txt"), 1, "declined.txt");
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(calls)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["done"]),
    ]);
    let params = json!({"approvalPolicy": "on-request", "sandbox": "read-only",
        "cwd": workdir.path().display().to_string()});
    let mut s = session(script, &[], params).await;
    s.start_turn("go", json!({})).await;
    let all = s
        .answer_approvals(3, |request| {
            assert_eq!(request["params"]["reason"], "needs to write");
            if request["params"]["itemId"] == "call_0" {
                "accept"
            } else {
                "decline"
            }
        })
        .await;
    single_turn_end(&all, "completed");
    assert_eq!(params_of(&all, COMMAND_APPROVAL).len(), 2);
    // The calls may be asked about in either order.
    let mut statuses: Vec<(String, Value)> = items_of(&all, "item/completed", "commandExecution")
        .iter()
        .map(|item| {
            let id = item["id"].as_str().unwrap_or_default().to_string();
            (id, item["status"].clone())
        })
        .collect();
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        statuses,
        vec![
            ("call_0".to_string(), json!("completed")),
            ("call_1".to_string(), json!("declined")),
        ]
    );
    assert!(
        workdir.path().join("approved.txt").exists(),
        "approved: ran outside the read-only sandbox"
    );
    assert!(!workdir.path().join("declined.txt").exists());
}

#[tokio::test]
async fn writable_roots_from_the_config_and_from_a_turn_are_writable_and_nothing_else() {
    let workdir = tempdir();
    let configured = tempdir();
    let per_turn = tempdir();
    let other = tempdir();
    let write = |dir: &Path| format!("echo x > {}/w.txt", dir.display());
    let calls = |b| shell_call(b, 0, &write(configured.path()));
    let second = |b| {
        let b = shell_call(b, 1, &write(per_turn.path()));
        let b = shell_call(b, 2, &write(other.path()));
        shell_call(
            b,
            3,
            &write(configured.path()).replace("w.txt", "again.txt"),
        )
    };
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(calls)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_1", &["one"]),
        ResponseBuilder::new("r3")
            .created()
            .with(second)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r4", "msg_2", &["two"]),
    ]);
    let roots = format!(
        "sandbox_workspace_write.writable_roots=[\"{}\"]",
        configured.path().display()
    );
    let params = json!({"approvalPolicy": "never", "sandbox": "workspace-write",
        "cwd": workdir.path().display().to_string()});
    let mut s = session(script, &[&roots], params).await;
    let first = s.run_turn("config").await;
    let items = items_of(&first, "item/completed", "commandExecution");
    assert_eq!(items[0]["status"], "completed", "{:?}", items[0]);
    assert!(configured.path().join("w.txt").exists());
    // The turn's policy replaces the thread's: its writableRoots, not the configured ones.
    s.start_turn(
        "turn",
        json!({"sandboxPolicy": {"type": "workspaceWrite",
                                 "writableRoots": [per_turn.path().display().to_string()]}}),
    )
    .await;
    let second = s.daemon.until_turn_completed().await;
    let status = |id: &str| {
        items_of(&second, "item/completed", "commandExecution")
            .iter()
            .find(|item| item["id"] == id)
            .map(|item| item["status"].clone())
    };
    assert_eq!(status("call_1"), Some(json!("completed")));
    assert_eq!(status("call_2"), Some(json!("failed")));
    assert_eq!(status("call_3"), Some(json!("failed")));
    assert!(per_turn.path().join("w.txt").exists());
    assert!(!other.path().join("w.txt").exists());
    assert!(!configured.path().join("again.txt").exists());
}
