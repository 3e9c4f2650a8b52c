//! A thread's sandbox is never run weaker than asked: with approval `never` and sandbox
//! `read-only` or `workspace-write` (the Python SDK's `deny_all` + `read_only`), commands run
//! inside the sandbox (a write outside what the mode allows fails, one inside it lands), and a
//! command asking to leave the sandbox (`require_escalated`) is refused — it does not run, the
//! model is told why, and the client sees the item `declined`. With `on-request`, escalation is
//! the approval prompt: an accepted command runs outside the sandbox, a declined one never does.
//! (Where the kernel cannot enforce the sandbox, commands are refused instead; the rules for that
//! are unit-tested in `core::tools::shell`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// A turn that calls `ls`, `touch made.txt` and `echo hi > redirected.txt`, then answers.
fn three_commands() -> Script {
    let calls = |b: ResponseBuilder| {
        b.exec_call("fc_1", "call_ls", json!({"cmd": "ls", "login": false}))
            .exec_call(
                "fc_2",
                "call_touch",
                json!({"cmd": "touch made.txt", "login": false}),
            )
            .exec_call(
                "fc_3",
                "call_redirect",
                json!({"cmd": "echo hi > redirected.txt", "login": false,
                   "sandbox_permissions": "require_escalated", "justification": "please"}),
            )
    };
    Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(calls)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["after"]),
    ])
}

fn completed_status(all: &[Value], id: &str) -> Option<Value> {
    items_of(all, "item/completed", "commandExecution")
        .iter()
        .find(|item| item["id"] == id)
        .map(|item| item["status"].clone())
}

/// Runs [`three_commands`] under the given thread and turn params: `ls` runs, `touch` runs
/// confined (and writes only when `touch_writes`), the escalated redirect is refused.
async fn assert_confined_under(
    thread_params: Value,
    turn_params: Value,
    mode: &str,
    touch_writes: bool,
) {
    let workdir = tempfile::tempdir().unwrap();
    let mut thread_params = thread_params;
    thread_params["cwd"] = json!(workdir.path().display().to_string());
    let mut s = session(three_commands(), &[], thread_params).await;
    s.start_turn("try", turn_params).await;
    let all = s.daemon.until_turn_completed().await;
    single_turn_end(&all, "completed");
    assert!(
        params_of(&all, COMMAND_APPROVAL).is_empty(),
        "{mode}: nobody is asked"
    );
    assert_eq!(completed_status(&all, "call_ls"), Some(json!("completed")));
    let touched = if touch_writes { "completed" } else { "failed" };
    assert_eq!(
        completed_status(&all, "call_touch"),
        Some(json!(touched)),
        "{mode}"
    );
    assert_eq!(
        completed_status(&all, "call_redirect"),
        Some(json!("declined")),
        "{mode}"
    );
    let started = items_of(&all, "item/started", "commandExecution");
    assert!(started.iter().any(|item| item["id"] == "call_redirect"));
    assert_eq!(
        workdir.path().join("made.txt").exists(),
        touch_writes,
        "{mode}"
    );
    assert!(!workdir.path().join("redirected.txt").exists(), "{mode}");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    for (id, text) in &outputs {
        match id.as_str() {
            "call_ls" => assert!(text.contains("Process exited with code 0"), "{text}"),
            "call_touch" if touch_writes => {
                assert!(text.contains("Process exited with code 0"), "{text}")
            }
            "call_touch" => {
                // Landlock (fallback) or the read-only mount (namespaces).
                assert!(
                    text.contains("Permission denied") || text.contains("Read-only file system"),
                    "{text}"
                );
                assert!(text.contains("sandbox may have refused it"), "{text}");
            }
            _ => {
                assert!(
                    text.starts_with("refused: this command asked to run outside the sandbox"),
                    "{id}: {text}"
                );
                assert!(text.contains("did not run"), "{text}");
            }
        }
    }
    assert_eq!(outputs.len(), 3);
    // The refusal is recorded like any other item, so a resumed thread shows it.
    let recorded = rollout_turn_items(&s.rollout());
    assert!(recorded
        .iter()
        .any(|item| item["id"] == "call_redirect" && item["status"] == "declined"));
}

#[tokio::test]
async fn never_with_a_read_only_thread_confines_and_refuses_escalation() {
    assert_confined_under(
        json!({"approvalPolicy": "never", "sandbox": "read-only"}),
        json!({}),
        "read-only",
        false,
    )
    .await;
}

#[tokio::test]
async fn never_with_a_workspace_write_turn_override_confines_and_refuses_escalation() {
    // The thread starts with full access; the turn narrows it, as an SDK's per-turn policy does.
    assert_confined_under(
        json!({"approvalPolicy": "on-request", "sandbox": "danger-full-access"}),
        json!({"approvalPolicy": "never",
               "sandboxPolicy": {"type": "workspaceWrite", "writableRoots": [], "networkAccess": false}}),
        "workspace-write",
        true,
    )
    .await;
}

#[tokio::test]
async fn on_request_read_only_asks_only_for_escalation_and_never_runs_a_declined_one() {
    let workdir = tempfile::tempdir().unwrap();
    let params = json!({"approvalPolicy": "on-request", "sandbox": "read-only",
        "cwd": workdir.path().display().to_string()});
    let mut s = session(three_commands(), &[], params).await;
    s.start_turn("try", json!({})).await;
    let all = s.answer_approvals(3, |_| "decline").await;
    single_turn_end(&all, "completed");
    let asked: Vec<&Value> = params_of(&all, COMMAND_APPROVAL)
        .iter()
        .map(|p| &p["itemId"])
        .collect();
    assert_eq!(asked, vec!["call_redirect"]);
    assert_eq!(completed_status(&all, "call_ls"), Some(json!("completed")));
    // Not asked about: it ran in the read-only sandbox, which refused the write.
    assert_eq!(completed_status(&all, "call_touch"), Some(json!("failed")));
    assert_eq!(
        completed_status(&all, "call_redirect"),
        Some(json!("declined"))
    );
    assert!(!workdir.path().join("made.txt").exists());
    assert!(!workdir.path().join("redirected.txt").exists());
}
