//! `openturn exec --json` with a model that writes a patch: like the reference's `codex exec`,
//! a patch inside the workspace is applied without asking under `workspace-write` (and under
//! `--full-auto` or `--dangerously-bypass-approvals-and-sandbox`), shows as a `file_change` item
//! and really writes the file; a patch the policy would ask about is declined headless.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use std::path::Path;

use exec_support::*;
use serde_json::{json, Value};
use support::mock_provider::split_text;
use support::*;
use turn_support::*;

/// Runs exec with `flags` on a model that writes `patch`, in `cwd`; returns the finished run.
async fn exec_patch(cwd: &Path, patch: &str, flags: &[&str]) -> ExecRun {
    let home = tempfile::tempdir().unwrap();
    let mock = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .custom_tool_call("ctc_1", "call_p", "apply_patch", &split_text(patch, 3))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["done"]),
    ]))
    .await
    .unwrap();
    let cwd_text = cwd.display().to_string();
    let mut args = vec!["--json", "-m", "gpt-5", "-C", &cwd_text];
    args.extend_from_slice(flags);
    args.push("write hello");
    let run = exec(home.path(), &mock, &args, "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    run
}

fn file_changes(events: &[Value]) -> Vec<Value> {
    of_type(events, "item.completed")
        .into_iter()
        .filter(|event| event["item"]["type"] == "file_change")
        .map(|event| event["item"].clone())
        .collect()
}

const HELLO: &str = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";

#[tokio::test]
async fn exec_json_applies_a_workspace_patch_without_asking_and_shows_the_file_change() {
    for flags in [
        &["-s", "workspace-write"][..],
        &["--full-auto"][..],
        &["--dangerously-bypass-approvals-and-sandbox"][..],
        &["-s", "workspace-write", "-c", "approval_policy=\"never\""][..],
    ] {
        let work = tempfile::tempdir().unwrap();
        let cwd = work.path().canonicalize().unwrap();
        let run = exec_patch(&cwd, HELLO, flags).await;
        assert_eq!(
            std::fs::read_to_string(cwd.join("hello.txt"))
                .ok()
                .as_deref(),
            Some("hi\n"),
            "{flags:?}: {run:#?}"
        );
        assert!(
            !run.stderr.contains("declined"),
            "{flags:?}: {}",
            run.stderr
        );
        let changes = file_changes(&run.events());
        assert_eq!(changes.len(), 1, "{flags:?}: {run:#?}");
        assert_eq!(changes[0]["status"], "completed", "{flags:?}");
        assert_eq!(
            changes[0]["changes"],
            json!([{"path": cwd.join("hello.txt").display().to_string(), "kind": "add"}])
        );
    }
}

#[tokio::test]
async fn exec_json_declines_a_patch_the_policy_would_ask_about() {
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path().canonicalize().unwrap();
    // Read-only under `on-request` would ask; headless, nobody can answer.
    let run = exec_patch(&cwd, HELLO, &["-s", "read-only"]).await;
    assert_eq!(std::fs::read_to_string(cwd.join("hello.txt")).ok(), None);
    assert!(
        run.stderr
            .contains("declined `item/fileChange/requestApproval`"),
        "{}",
        run.stderr
    );
    let changes = file_changes(&run.events());
    assert_eq!(changes.len(), 1, "{run:#?}");
    assert_eq!(changes[0]["status"], "declined");
}
