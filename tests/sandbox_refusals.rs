//! A thread whose sandbox openturn cannot enforce is never run weaker than asked: with approval
//! `never` and sandbox `read-only` or `workspace-write` (the Python SDK's `deny_all` +
//! `read_only`), a command that is not a plain known read-only one is refused — it does not run,
//! the model is told why, and the client sees the item `declined` — while plain read-only
//! commands still run. With `on-request`, the approval prompt is the escalation: an accepted
//! command runs, a declined one never does.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

const APPROVAL: &str = "item/commandExecution/requestApproval";

/// A turn that calls `ls`, `touch made.txt` and `echo hi > redirected.txt`, then answers.
fn three_commands() -> Script {
    let calls = vec![
        exec_call("fc_1", "call_ls", json!({"cmd": "ls", "login": false})),
        exec_call(
            "fc_2",
            "call_touch",
            json!({"cmd": "touch made.txt", "login": false}),
        ),
        exec_call(
            "fc_3",
            "call_redirect",
            json!({"cmd": "echo hi > redirected.txt", "login": false,
                   "sandbox_permissions": "require_escalated", "justification": "please"}),
        ),
    ];
    Script::new([
        response("r1", calls, None),
        response("r2", vec![message("msg_f", &["after"])], None),
    ])
}

fn completed_status(all: &[Value], id: &str) -> Option<Value> {
    items_of(all, "item/completed", "commandExecution")
        .iter()
        .find(|item| item["id"] == id)
        .map(|item| item["status"].clone())
}

/// Runs [`three_commands`] under the given thread and turn params; checks the refusals.
async fn assert_refused_under(thread_params: Value, turn_params: Value, mode: &str) {
    let workdir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut thread_params = thread_params;
    thread_params["cwd"] = json!(workdir.path().display().to_string());
    let mut s = session(three_commands(), &[], thread_params).await;
    s.start_turn("try", turn_params).await;
    let all = s.daemon.until_turn_completed().await;
    single_turn_end(&all, "completed");
    assert!(
        params_of(&all, APPROVAL).is_empty(),
        "{mode}: nobody is asked"
    );
    assert_eq!(completed_status(&all, "call_ls"), Some(json!("completed")));
    for id in ["call_touch", "call_redirect"] {
        assert_eq!(
            completed_status(&all, id),
            Some(json!("declined")),
            "{mode} {id}"
        );
        let started = items_of(&all, "item/started", "commandExecution");
        assert!(started.iter().any(|item| item["id"] == id), "{mode} {id}");
    }
    assert!(!workdir.path().join("made.txt").exists(), "{mode}");
    assert!(!workdir.path().join("redirected.txt").exists(), "{mode}");
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    for (id, text) in &outputs {
        if id == "call_ls" {
            assert!(text.contains("Exit code: 0"), "{text}");
        } else {
            assert!(
                text.starts_with(&format!(
                    "refused: this thread's sandbox is {mode} and openturn cannot confine this \
                     command"
                )),
                "{id}: {text}"
            );
            assert!(text.contains("did not run"), "{text}");
        }
    }
    assert_eq!(outputs.len(), 3);
    // The refusal is recorded like any other item, so a resumed thread shows it.
    let recorded = rollout_turn_items(&s.rollout());
    assert!(recorded
        .iter()
        .any(|item| item["id"] == "call_touch" && item["status"] == "declined"));
}

#[tokio::test]
async fn never_with_a_read_only_thread_refuses_what_it_cannot_confine() {
    assert_refused_under(
        json!({"approvalPolicy": "never", "sandbox": "read-only"}),
        json!({}),
        "read-only",
    )
    .await;
}

#[tokio::test]
async fn never_with_a_workspace_write_turn_override_refuses_what_it_cannot_confine() {
    // The thread starts with full access; the turn narrows it, as an SDK's per-turn policy does.
    assert_refused_under(
        json!({"approvalPolicy": "on-request", "sandbox": "danger-full-access"}),
        json!({"approvalPolicy": "never",
               "sandboxPolicy": {"type": "workspaceWrite", "writableRoots": [], "networkAccess": false}}),
        "workspace-write",
    )
    .await;
}

#[tokio::test]
async fn on_request_read_only_runs_an_approved_command_and_never_a_declined_one() {
    let workdir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let params = json!({"approvalPolicy": "on-request", "sandbox": "read-only",
        "cwd": workdir.path().display().to_string()});
    let mut s = session(three_commands(), &[], params).await;
    s.start_turn("try", json!({})).await;
    let mut all = Vec::new();
    for _ in 0..3 {
        let batch = s
            .daemon
            .collect_until(|m| m["method"] == APPROVAL || m["method"] == "turn/completed")
            .await;
        let last = batch.last().cloned().unwrap_or_default();
        all.extend(batch);
        if last["method"] == "turn/completed" {
            break;
        }
        let decision = if last["params"]["itemId"] == "call_touch" {
            "accept"
        } else {
            "decline"
        };
        s.answer(&last["id"], json!({"decision": decision})).await;
    }
    single_turn_end(&all, "completed");
    let asked: Vec<&Value> = params_of(&all, APPROVAL)
        .iter()
        .map(|p| &p["itemId"])
        .collect();
    assert_eq!(asked, vec!["call_touch", "call_redirect"]);
    assert_eq!(completed_status(&all, "call_ls"), Some(json!("completed")));
    assert_eq!(
        completed_status(&all, "call_touch"),
        Some(json!("completed"))
    );
    assert_eq!(
        completed_status(&all, "call_redirect"),
        Some(json!("declined"))
    );
    assert!(workdir.path().join("made.txt").exists());
    assert!(!workdir.path().join("redirected.txt").exists());
}
