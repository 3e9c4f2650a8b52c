//! What an `apply_patch` call writes when the file system changes while it waits for the
//! user, through the real binary: a file edited meanwhile fails the patch and keeps the edit; a
//! directory swapped for a link to outside the workspace fails the patch and nothing is written
//! outside (the daemon writes beneath its writable root, never through a link).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::mock_provider::split_text;
use support::*;
use turn_support::*;

fn tempdir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    (dir, cwd)
}

/// A thread that asks about every patch (`untrusted`) under workspace-write, whose first
/// response is the patch and whose second a message.
async fn asking_session(cwd: &Path, patch: &str) -> Session {
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .custom_tool_call("ctc_1", "call_p", "apply_patch", &split_text(patch, 4))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["ok"]),
    ]);
    let params = json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write",
        "model": "gpt-5", "cwd": cwd.display().to_string()});
    session(script, &[], params).await
}

/// Runs the turn; `meanwhile` runs while the approval request waits, then the patch is
/// accepted. Returns the turn's messages and what the model was told.
async fn accept_after(s: &mut Session, meanwhile: impl FnOnce()) -> (Vec<Value>, String) {
    s.start_turn("edit", json!({})).await;
    let mut turn = s
        .daemon
        .collect_until(|m| m["method"] == "item/fileChange/requestApproval")
        .await;
    meanwhile();
    let request = turn.last().cloned().unwrap();
    s.answer(&request["id"], json!({"decision": "accept"}))
        .await;
    turn.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(2).await;
    let told = bodies[1]["input"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|item| item["type"] == "custom_tool_call_output" && item["call_id"] == "call_p")
        .and_then(|item| item["output"].as_str())
        .unwrap_or_else(|| panic!("no output for call_p in {:#}", bodies[1]))
        .to_string();
    (turn, told)
}

fn file_change_status(turn: &[Value]) -> Value {
    let completed = items_of(turn, "item/completed", "fileChange");
    assert_eq!(completed.len(), 1, "{turn:#?}");
    completed[0]["status"].clone()
}

#[tokio::test]
async fn an_edit_made_while_the_approval_waits_fails_the_patch_and_survives() {
    let (_dir, cwd) = tempdir();
    std::fs::write(cwd.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch\n";
    let mut s = asking_session(&cwd, patch).await;
    let edited = "one\ntwo\nthree\nthe user's own line\n";
    let (turn, told) = accept_after(&mut s, || {
        std::fs::write(cwd.join("a.txt"), edited).unwrap();
    })
    .await;
    assert_eq!(std::fs::read_to_string(cwd.join("a.txt")).unwrap(), edited);
    assert!(
        !cwd.join("new.txt").exists(),
        "no file of the patch is written"
    );
    assert_eq!(file_change_status(&turn), "failed");
    assert!(
        told.contains("a.txt changed after the patch was read")
            && told.contains("no file was changed"),
        "{told}"
    );
    assert!(params_of(&turn, "turn/diff/updated").is_empty());
}

#[tokio::test]
async fn a_directory_swapped_for_a_link_while_the_approval_waits_is_not_written_through() {
    let (_dir, cwd) = tempdir();
    let (_outside_dir, outside) = tempdir();
    std::fs::create_dir(cwd.join("sub")).unwrap();
    let patch = "*** Begin Patch\n*** Add File: sub/new.txt\n+x\n*** End Patch\n";
    let mut s = asking_session(&cwd, patch).await;
    // What a command of the same turn could do while the user reads the request.
    let (turn, told) = accept_after(&mut s, || {
        std::fs::rename(cwd.join("sub"), cwd.join("sub.before")).unwrap();
        std::os::unix::fs::symlink(&outside, cwd.join("sub")).unwrap();
    })
    .await;
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!cwd.join("sub.before/new.txt").exists());
    assert_eq!(file_change_status(&turn), "failed");
    assert!(
        told.contains("symbolic link") && told.contains("every file was left as it was"),
        "{told}"
    );
}
