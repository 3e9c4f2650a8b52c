//! What a client sees of an `apply_patch` call, through the real binary. By default, as the
//! reference does, the `fileChange` item starts with its changes once the patch is complete
//! (clients such as the ACP bridge draw the edit from that start alone), and no preview is
//! sent. With the reference's `apply_patch_streaming_events` feature, the item starts when the
//! patch starts streaming, its previews follow, and it completes after every preview. Either
//! way the approval request carries `startedAtMs` and `turn/diff/updated` follows an applied
//! patch. A call cut off mid-stream still completes its item, and the previews of a large patch
//! cost bytes in proportion to its size, not its square.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn thread_params(cwd: &Path, approval: &str) -> Value {
    json!({"approvalPolicy": approval, "sandbox": "workspace-write", "model": "gpt-5",
        "cwd": cwd.display().to_string()})
}

fn tempdir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    (dir, cwd)
}

/// The reference's switch for showing a patch while it streams.
const PREVIEWS: &[&str] = &["features.apply_patch_streaming_events=true"];

fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since_epoch.as_millis()).unwrap()
}

/// Where the first message matching `pred` is.
fn position(messages: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    messages
        .iter()
        .position(pred)
        .unwrap_or_else(|| panic!("no such message in {messages:#?}"))
}

fn is_file_change(message: &Value, method: &str) -> bool {
    message["method"] == method && message["params"]["item"]["type"] == "fileChange"
}

const UPDATE: &str = "*** Begin Patch
*** Update File: a.txt
@@
 one
-two
+2
*** End Patch
";

/// Runs `UPDATE` (streamed line by line) in a thread that asks about every patch, accepts it,
/// and returns the turn's messages after checking what both modes share: one item, started
/// before the approval request (which carries `startedAtMs`), completed after it, then the
/// turn's diff; the file written.
async fn asked_patch_turn(extra: &[&str]) -> Vec<Value> {
    let (_dir, cwd) = tempdir();
    std::fs::write(cwd.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .custom_tool_call(
                "ctc_1",
                "call_p",
                "apply_patch",
                &UPDATE.split_inclusive('\n').collect::<Vec<_>>(),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["ok"]),
    ]);
    // `untrusted` asks about every patch.
    let mut s = session(script, extra, thread_params(&cwd, "untrusted")).await;
    let asked_after = now_ms();
    s.start_turn("edit", json!({})).await;
    let mut turn = s
        .daemon
        .collect_until(|m| m["method"] == "item/fileChange/requestApproval")
        .await;
    let request = turn.last().cloned().unwrap();
    let started_at = request["params"]["startedAtMs"].as_i64();
    assert!(
        started_at.is_some_and(|at| at >= asked_after && at <= now_ms()),
        "{request:#}"
    );
    assert_eq!(request["params"]["itemId"], "call_p");
    s.answer(&request["id"], json!({"decision": "accept"}))
        .await;
    turn.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&turn, "completed");

    let started = position(&turn, |m| is_file_change(m, "item/started"));
    let asked = position(&turn, |m| m["method"] == "item/fileChange/requestApproval");
    let completed = position(&turn, |m| is_file_change(m, "item/completed"));
    let diff = position(&turn, |m| m["method"] == "turn/diff/updated");
    assert!(
        started < asked && asked < completed && completed < diff,
        "{turn:#?}"
    );
    assert_eq!(items_of(&turn, "item/started", "fileChange").len(), 1);
    assert_eq!(items_of(&turn, "item/completed", "fileChange").len(), 1);
    let item = &turn[started]["params"]["item"];
    assert_eq!(
        (&item["id"], &item["status"]),
        (&json!("call_p"), &json!("inProgress"))
    );
    let item = &turn[completed]["params"]["item"];
    assert_eq!(item["status"], "completed");
    assert_eq!(item["changes"], planned_changes(&cwd));
    // The turn's diff of everything changed so far, in `git diff` form.
    assert_eq!(
        turn[diff]["params"]["diff"],
        "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
        "one\n2\nthree\n"
    );
    turn
}

/// `UPDATE`'s changes once matched against the file: what a completed item lists.
fn planned_changes(cwd: &Path) -> Value {
    json!([{"path": cwd.join("a.txt").display().to_string(),
        "kind": {"type": "update", "move_path": null},
        "diff": "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"}])
}

#[tokio::test]
async fn by_default_the_item_starts_with_its_changes_and_no_preview_is_sent() {
    let turn = asked_patch_turn(&[]).await;
    assert!(
        params_of(&turn, "item/fileChange/patchUpdated").is_empty(),
        "{turn:#?}"
    );
    let started = &items_of(&turn, "item/started", "fileChange")[0];
    let completed = &items_of(&turn, "item/completed", "fileChange")[0];
    assert_eq!(started["changes"], completed["changes"]);
}

#[tokio::test]
async fn with_previews_the_item_starts_first_and_completes_after_its_last_preview() {
    let turn = asked_patch_turn(PREVIEWS).await;
    let started = position(&turn, |m| is_file_change(m, "item/started"));
    let first_update = position(&turn, |m| m["method"] == "item/fileChange/patchUpdated");
    let last_update = turn
        .iter()
        .rposition(|m| m["method"] == "item/fileChange/patchUpdated")
        .unwrap();
    let asked = position(&turn, |m| m["method"] == "item/fileChange/requestApproval");
    assert!(started < first_update && last_update < asked, "{turn:#?}");
    // Nothing is known of the patch when it starts streaming; the previews show it as written.
    assert_eq!(turn[started]["params"]["item"]["changes"], json!([]));
    assert_eq!(
        turn[last_update]["params"]["changes"],
        json!([{"path": "a.txt", "kind": {"type": "update", "move_path": null},
            "diff": "@@\n one\n-two\n+2\n"}])
    );
}

/// A response that fails while the patch streams: the call never runs, and the item it started
/// completes as failed with what was shown, before the turn ends.
#[tokio::test]
async fn a_patch_cut_off_mid_stream_completes_its_item_as_failed() {
    let (_dir, cwd) = tempdir();
    let item = json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p",
        "name": "apply_patch", "input": ""});
    let mut builder = ResponseBuilder::new("r1").created().output_item_added(item);
    for delta in [
        "*** Begin Patch\n*** Add File: a.txt\n",
        "+half\n",
        "+of it",
    ] {
        builder = builder.event(json!({"type": "response.custom_tool_call_input.delta",
            "item_id": "ctc_1", "call_id": "call_p", "delta": delta}));
    }
    let script = Script::new([builder
        .failed("server_error", "the model fell over")
        .build()]);
    let mut s = session(script, PREVIEWS, thread_params(&cwd, "never")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "failed");
    let started = position(&turn, |m| is_file_change(m, "item/started"));
    let completed = position(&turn, |m| is_file_change(m, "item/completed"));
    assert!(started < completed, "{turn:#?}");
    let item = &turn[completed]["params"]["item"];
    assert_eq!(item["status"], "failed");
    assert_eq!(
        item["changes"],
        json!([{"path": "a.txt", "kind": {"type": "add"}, "diff": "half\n"}])
    );
    assert!(!cwd.join("a.txt").exists());
}

/// One line per delta, 1,500 lines: the updates together carry a few times the patch. Sending
/// every parsed file on every line would carry about 750 times it.
#[tokio::test]
async fn the_previews_of_a_large_patch_cost_bytes_in_proportion_to_its_size() {
    let (_dir, cwd) = tempdir();
    let mut patch = String::from("*** Begin Patch\n*** Add File: big.txt\n");
    let mut content = String::new();
    for index in 0..1_500 {
        patch.push_str(&format!("+line number {index}\n"));
        content.push_str(&format!("line number {index}\n"));
    }
    patch.push_str("*** End Patch\n");
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .custom_tool_call(
                "ctc_1",
                "call_big",
                "apply_patch",
                &patch.split_inclusive('\n').collect::<Vec<_>>(),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(script, PREVIEWS, thread_params(&cwd, "never")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    let updates: Vec<&Value> = turn
        .iter()
        .filter(|m| m["method"] == "item/fileChange/patchUpdated")
        .collect();
    let bytes: usize = updates.iter().map(|m| m.to_string().len()).sum();
    assert!(
        bytes <= 8 * patch.len(),
        "{} updates carried {bytes} bytes for a patch of {}",
        updates.len(),
        patch.len()
    );
    // Still a live preview, and the last update shows the whole file.
    assert!(updates.len() >= 10, "{} updates", updates.len());
    let last = &updates[updates.len() - 1]["params"]["changes"];
    assert_eq!(
        last,
        &json!([{"path": "big.txt", "kind": {"type": "add"}, "diff": content}])
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("big.txt")).unwrap(),
        content
    );
}
