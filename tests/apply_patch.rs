//! `apply_patch` through the real binary: the freeform (custom) and JSON function forms edit
//! files exactly; a hunk that does not match changes no file at all; a path escaping the
//! workspace is refused under workspace-write; approval accept and decline round trips.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::mock_provider::split_text;
use support::*;
use turn_support::*;

fn thread_params(cwd: &Path, approval: &str, sandbox: &str) -> Value {
    json!({"approvalPolicy": approval, "sandbox": sandbox, "model": "gpt-5",
        "cwd": cwd.display().to_string()})
}

/// A response whose one item is an `apply_patch` call (`custom_tool_call`, item id
/// `ctc_<call_id>`) with `patch` streamed in `pieces` deltas.
fn patch_reply(response_id: &str, call_id: &str, patch: &str, pieces: usize) -> Reply {
    ResponseBuilder::new(response_id)
        .created()
        .custom_tool_call(
            &format!("ctc_{call_id}"),
            call_id,
            "apply_patch",
            &split_text(patch, pieces),
        )
        .completed(Usage::small(), None)
        .build()
}

fn tempdir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    (dir, cwd)
}

fn write(cwd: &Path, name: &str, text: &str) {
    std::fs::write(cwd.join(name), text).unwrap();
}

fn read(cwd: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(cwd.join(name)).ok()
}

/// The text the model got back for `call_id` in the second request.
fn output_for(body: &Value, call_id: &str) -> String {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|item| item["call_id"] == call_id && item["output"].is_string())
        .and_then(|item| item["output"].as_str())
        .unwrap_or_else(|| panic!("no output for {call_id} in {body:#}"))
        .to_string()
}

const EDIT: &str = "*** Begin Patch
*** Add File: notes/new.txt
+hello
*** Update File: a.txt
@@
 one
-two
+2
*** Update File: old.txt
*** Move to: renamed.txt
@@
-x
+y
*** Delete File: gone.txt
*** End Patch
";

fn fixture(cwd: &Path) {
    write(cwd, "a.txt", "one\ntwo\nthree\n");
    write(cwd, "old.txt", "x\n");
    write(cwd, "gone.txt", "bye\n");
}

fn assert_edited(cwd: &Path) {
    assert_eq!(read(cwd, "notes/new.txt").as_deref(), Some("hello\n"));
    assert_eq!(read(cwd, "a.txt").as_deref(), Some("one\n2\nthree\n"));
    assert_eq!(read(cwd, "old.txt"), None);
    assert_eq!(read(cwd, "renamed.txt").as_deref(), Some("y\n"));
    assert_eq!(read(cwd, "gone.txt"), None);
}

#[tokio::test]
async fn a_freeform_patch_adds_updates_moves_and_deletes_exactly() {
    let (_dir, cwd) = tempdir();
    fixture(&cwd);
    let script = Script::new([
        patch_reply("r1", "call_p", EDIT, 7),
        message_reply("r2", "m", &["Done."]),
    ]);
    // gpt-5.5 is offered the freeform tool (gpt-5's set, like the reference's, has none).
    let mut params = thread_params(&cwd, "never", "workspace-write");
    params["model"] = json!("gpt-5.5");
    let mut s = session(script, &[], params).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_edited(&cwd);
    let completed = items_of(&turn, "item/completed", "fileChange");
    assert_eq!(completed.len(), 1, "{turn:#?}");
    assert_eq!(completed[0]["status"], "completed");
    // Listed by path, as the reference lists them; an added file's diff is its content, a
    // deleted file's what it held, an update's the unified diff.
    let path = |name: &str| cwd.join(name).display().to_string();
    assert_eq!(
        completed[0]["changes"],
        json!([
            {"path": path("a.txt"), "kind": {"type": "update", "move_path": null},
             "diff": "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"},
            {"path": path("gone.txt"), "kind": {"type": "delete"}, "diff": "bye\n"},
            {"path": path("notes/new.txt"), "kind": {"type": "add"}, "diff": "hello\n"},
            {"path": path("old.txt"), "kind": {"type": "update", "move_path": path("renamed.txt")},
             "diff": "@@ -1 +1 @@\n-x\n+y\n"},
        ])
    );
    let bodies = s.bodies(2).await;
    let tool = bodies[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|tool| tool["name"] == "apply_patch")
        .cloned()
        .expect("no apply_patch tool");
    assert_eq!(tool["type"], "custom");
    assert_eq!(tool["format"]["syntax"], "lark");
    assert!(output_for(&bodies[1], "call_p").starts_with("Success."));
}

#[tokio::test]
async fn a_hunk_that_does_not_match_changes_no_file_across_the_patch() {
    let (_dir, cwd) = tempdir();
    fixture(&cwd);
    let bad = EDIT.replace("-x\n+y", "-not there\n+y");
    let script = Script::new([
        patch_reply("r1", "call_p", &bad, 3),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(script, &[], thread_params(&cwd, "never", "workspace-write")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_eq!(read(&cwd, "notes/new.txt"), None);
    assert_eq!(read(&cwd, "a.txt").as_deref(), Some("one\ntwo\nthree\n"));
    assert_eq!(read(&cwd, "gone.txt").as_deref(), Some("bye\n"));
    assert_eq!(
        items_of(&turn, "item/completed", "fileChange")[0]["status"],
        "failed"
    );
    let bodies = s.bodies(2).await;
    let output = output_for(&bodies[1], "call_p");
    assert!(
        output.contains("old.txt: hunk 1 did not match") && output.contains("not there"),
        "{output}"
    );
}

#[tokio::test]
async fn a_path_escaping_the_workspace_is_refused_under_workspace_write() {
    let (_dir, cwd) = tempdir();
    let (_outside_dir, outside) = tempdir();
    let escaping = format!(
        "*** Begin Patch\n*** Add File: inside.txt\n+x\n*** Add File: {}\n+x\n*** End Patch\n",
        outside.join("evil.txt").display()
    );
    let script = Script::new([
        patch_reply("r1", "call_p", &escaping, 2),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(script, &[], thread_params(&cwd, "never", "workspace-write")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_eq!(read(&outside, "evil.txt"), None);
    assert_eq!(read(&cwd, "inside.txt"), None);
    assert_eq!(
        items_of(&turn, "item/completed", "fileChange")[0]["status"],
        "declined"
    );
    let bodies = s.bodies(2).await;
    let output = output_for(&bodies[1], "call_p");
    // The model is told which path, what it may write instead, and that nothing changed.
    assert!(
        output.contains(&outside.join("evil.txt").display().to_string())
            && output.contains("outside the writable roots")
            && output.contains(&cwd.display().to_string())
            && output.contains("No file was changed"),
        "{output}"
    );
}

#[tokio::test]
async fn the_function_form_is_offered_to_other_models_and_applies_the_same() {
    let (_dir, cwd) = tempdir();
    fixture(&cwd);
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .function_call_json("fc_1", "call_f", "apply_patch", json!({"input": EDIT}))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut params = thread_params(&cwd, "never", "danger-full-access");
    params["model"] = json!("gpt-4.1");
    let mut s = session(script, &[], params).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_edited(&cwd);
    let bodies = s.bodies(2).await;
    let tool = bodies[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|tool| tool["name"] == "apply_patch")
        .cloned()
        .expect("no apply_patch tool");
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["parameters"]["required"], json!(["input"]));
    assert!(output_for(&bodies[1], "call_f").starts_with("Success."));
}

/// Waits for `item/fileChange/requestApproval`, answers it with `decision`, and returns every
/// message of the turn.
async fn answer_patch_approval(s: &mut Session, decision: &str, before: impl Fn()) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = s.daemon.next_message().await;
        seen.push(message.clone());
        if message["method"] == "item/fileChange/requestApproval" {
            before();
            s.answer(&message["id"], json!({"decision": decision}))
                .await;
            break;
        }
        assert_ne!(message["method"], "turn/completed", "{seen:#?}");
    }
    seen.extend(s.daemon.until_turn_completed().await);
    seen
}

async fn approval_round_trip(
    decision: &str,
) -> (Vec<Value>, std::path::PathBuf, tempfile::TempDir) {
    let (dir, cwd) = tempdir();
    fixture(&cwd);
    let script = Script::new([
        patch_reply("r1", "call_p", EDIT, 2),
        message_reply("r2", "m", &["ok"]),
    ]);
    // Read-only: every patch needs the user's approval.
    let mut s = session(script, &[], thread_params(&cwd, "on-request", "read-only")).await;
    s.start_turn("edit", json!({})).await;
    let mut seen = Vec::new();
    loop {
        let message = s.daemon.next_message().await;
        seen.push(message.clone());
        if message["method"] == "item/fileChange/requestApproval" {
            assert_eq!(message["params"]["itemId"], "call_p");
            // Nothing is written while the user decides.
            assert_eq!(read(&cwd, "a.txt").as_deref(), Some("one\ntwo\nthree\n"));
            s.answer(&message["id"], json!({"decision": decision}))
                .await;
            break;
        }
    }
    seen.extend(s.daemon.until_turn_completed().await);
    (seen, cwd, dir)
}

#[tokio::test]
async fn an_accepted_approval_applies_the_patch() {
    let (turn, cwd, _dir) = approval_round_trip("accept").await;
    assert_edited(&cwd);
    assert_eq!(
        items_of(&turn, "item/completed", "fileChange")[0]["status"],
        "completed"
    );
}

#[tokio::test]
async fn a_declined_approval_changes_nothing() {
    let (turn, cwd, _dir) = approval_round_trip("decline").await;
    assert_eq!(read(&cwd, "a.txt").as_deref(), Some("one\ntwo\nthree\n"));
    assert_eq!(read(&cwd, "notes/new.txt"), None);
    assert_eq!(
        items_of(&turn, "item/completed", "fileChange")[0]["status"],
        "declined"
    );
}

/// With the reference's `apply_patch_streaming_events` feature on, the patch is shown while the
/// model is still writing it (see `tests/apply_patch_events.rs` for the default).
#[tokio::test]
async fn a_streamed_patch_is_shown_while_the_model_is_still_writing_it() {
    let (_dir, cwd) = tempdir();
    fixture(&cwd);
    let script = Script::new([
        patch_reply("r1", "call_p", EDIT, 12),
        message_reply("r2", "m", &["ok"]),
    ]);
    let previews = ["features.apply_patch_streaming_events=true"];
    let params = thread_params(&cwd, "never", "workspace-write");
    let mut s = session(script, &previews, params).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_edited(&cwd);
    let position = |pred: &dyn Fn(&Value) -> bool| turn.iter().position(pred);
    let updates = params_of(&turn, "item/fileChange/patchUpdated");
    assert!(updates.len() >= 2, "{turn:#?}");
    // The item starts before its first update and completes after its last (a client that
    // renders by item knows the item of every update), and the snapshots only grow.
    let is_file_change = |m: &Value, method: &str| {
        m["method"] == method && m["params"]["item"]["type"] == "fileChange"
    };
    let item_started = position(&|m| is_file_change(m, "item/started"));
    let first_update = position(&|m| m["method"] == "item/fileChange/patchUpdated");
    let last_update = turn
        .iter()
        .rposition(|m| m["method"] == "item/fileChange/patchUpdated");
    let item_completed = position(&|m| is_file_change(m, "item/completed"));
    assert!(
        item_started.is_some() && item_started < first_update,
        "{turn:#?}"
    );
    assert!(last_update < item_completed, "{turn:#?}");
    let counts: Vec<usize> = updates
        .iter()
        .map(|u| u["changes"].as_array().map_or(0, Vec::len))
        .collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    let last = updates[updates.len() - 1];
    assert_eq!(last["itemId"], "call_p");
    // As the reference streams it: paths as the patch writes them, by path; an added file's
    // lines, an update's hunks as written.
    assert_eq!(
        last["changes"],
        json!([
            {"path": "a.txt", "kind": {"type": "update", "move_path": null},
             "diff": "@@\n one\n-two\n+2\n"},
            {"path": "gone.txt", "kind": {"type": "delete"}, "diff": ""},
            {"path": "notes/new.txt", "kind": {"type": "add"}, "diff": "hello\n"},
            {"path": "old.txt", "kind": {"type": "update", "move_path": "renamed.txt"},
             "diff": "@@\n-x\n+y\n"},
        ])
    );
}

fn git(cwd: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.quotepath=off",
        ])
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The turn's cumulative diff is what `git diff` says of the same changes (git's `index` lines
/// aside, since openturn does not hash blobs), across two patches of one turn.
#[tokio::test]
async fn the_turn_diff_matches_git_diff_on_a_repository() {
    let (_dir, cwd) = tempdir();
    fixture(&cwd);
    git(&cwd, &["init", "-q"]);
    git(&cwd, &["add", "-A"]);
    git(&cwd, &["commit", "-qm", "fixture"]);
    let second = "*** Begin Patch\n*** Update File: a.txt\n@@\n-three\n+3\n*** End Patch\n";
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .custom_tool_call("ctc_call_1", "call_1", "apply_patch", &split_text(EDIT, 3))
            .completed(Usage::small(), None)
            .build(),
        ResponseBuilder::new("r2")
            .created()
            .custom_tool_call(
                "ctc_call_2",
                "call_2",
                "apply_patch",
                &split_text(second, 2),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r3", "m", &["ok"]),
    ]);
    let mut s = session(script, &[], thread_params(&cwd, "never", "workspace-write")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    let diffs = params_of(&turn, "turn/diff/updated");
    assert_eq!(diffs.len(), 2, "{turn:#?}");
    let ours = diffs[1]["diff"].as_str().unwrap_or_default().to_string();
    git(&cwd, &["add", "-A"]);
    let theirs: String = git(&cwd, &["diff", "--cached", "--no-renames"])
        .lines()
        .filter(|line| !line.starts_with("index "))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(ours, theirs);
}

/// A shell command that is an `apply_patch` heredoc is applied as a patch (a `fileChange`
/// item), not run as a process (no `commandExecution` item).
#[tokio::test]
async fn an_apply_patch_heredoc_sent_to_exec_command_is_applied_as_a_patch() {
    let (_dir, cwd) = tempdir();
    fixture(&cwd);
    let cmd = format!("apply_patch <<'EOF'\n{EDIT}EOF\n");
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .exec_call("fc_1", "call_h", json!({"cmd": cmd}))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(script, &[], thread_params(&cwd, "never", "workspace-write")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_edited(&cwd);
    assert!(items_of(&turn, "item/started", "commandExecution").is_empty());
    assert_eq!(
        items_of(&turn, "item/completed", "fileChange")[0]["status"],
        "completed"
    );
}

/// `workspace-write` lets a patch write exactly where its commands may: the cwd and the
/// configured `[sandbox_workspace_write] writable_roots`, never `.git` or openturn's home; and
/// inside those roots, `on-request` applies it without asking.
#[tokio::test]
async fn workspace_write_patches_follow_the_sandbox_writable_roots() {
    let (_dir, cwd) = tempdir();
    let (_extra_dir, extra) = tempdir();
    std::fs::create_dir(cwd.join(".git")).unwrap();
    let roots = format!(
        "sandbox_workspace_write.writable_roots=[\"{}\"]",
        extra.display()
    );
    let inside = format!(
        "*** Begin Patch\n*** Add File: in.txt\n+a\n*** Add File: {}\n+b\n*** End Patch\n",
        extra.join("in_extra.txt").display()
    );
    let into_git = "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+evil\n*** End Patch\n";
    let script = Script::new([
        patch_reply("r1", "call_in", &inside, 2),
        patch_reply("r2", "call_git", into_git, 2),
        message_reply("r3", "m", &["ok"]),
    ]);
    let mut s = session(
        script,
        &[&roots],
        thread_params(&cwd, "never", "workspace-write"),
    )
    .await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_eq!(read(&cwd, "in.txt").as_deref(), Some("a\n"));
    assert_eq!(read(&extra, "in_extra.txt").as_deref(), Some("b\n"));
    assert_eq!(read(&cwd, ".git/hooks/pre-commit"), None);
    let statuses: Vec<&Value> = items_of(&turn, "item/completed", "fileChange")
        .iter()
        .map(|item| &item["status"])
        .collect();
    assert_eq!(statuses, vec!["completed", "declined"]);
    let bodies = s.bodies(3).await;
    let output = output_for(&bodies[2], "call_git");
    assert!(
        output.contains(".git") && output.contains("stays read-only"),
        "{output}"
    );

    // The same thread's roots under `on-request`: nothing to ask about inside them.
    let (_dir, cwd) = tempdir();
    let script = Script::new([
        patch_reply("r1", "call_in", &inside, 2),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(
        script,
        &[&roots],
        thread_params(&cwd, "on-request", "workspace-write"),
    )
    .await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert!(
        !turn
            .iter()
            .any(|m| m["method"] == "item/fileChange/requestApproval"),
        "{turn:#?}"
    );
    assert_eq!(read(&cwd, "in.txt").as_deref(), Some("a\n"));
}

/// Outside the writable roots, a policy that may ask asks (the reference's rule), and an
/// accepted patch is written there.
#[tokio::test]
async fn an_escaping_patch_is_asked_about_when_the_policy_allows_asking() {
    let (_dir, cwd) = tempdir();
    let (_outside_dir, outside) = tempdir();
    let escaping = format!(
        "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch\n",
        outside.join("asked.txt").display()
    );
    let script = Script::new([
        patch_reply("r1", "call_p", &escaping, 2),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(
        script,
        &[],
        thread_params(&cwd, "on-request", "workspace-write"),
    )
    .await;
    s.start_turn("edit", json!({})).await;
    let turn = answer_patch_approval(&mut s, "accept", || {
        assert_eq!(read(&outside, "asked.txt"), None);
    })
    .await;
    single_turn_end(&turn, "completed");
    assert_eq!(read(&outside, "asked.txt").as_deref(), Some("x\n"));
}

/// Read-only with approval `never`: the patch is refused, the model is told why, and the file
/// does not exist.
#[tokio::test]
async fn read_only_without_asking_refuses_every_patch() {
    let (_dir, cwd) = tempdir();
    let add = "*** Begin Patch\n*** Add File: no.txt\n+x\n*** End Patch\n";
    let script = Script::new([
        patch_reply("r1", "call_p", add, 2),
        message_reply("r2", "m", &["ok"]),
    ]);
    let mut s = session(script, &[], thread_params(&cwd, "never", "read-only")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_eq!(read(&cwd, "no.txt"), None);
    assert_eq!(
        items_of(&turn, "item/completed", "fileChange")[0]["status"],
        "declined"
    );
    let bodies = s.bodies(2).await;
    let output = output_for(&bodies[1], "call_p");
    assert!(
        output.contains("read-only") && output.contains("No file was changed"),
        "{output}"
    );
}

/// `apply_patch_tool_type` in config.toml picks the form: top level for every model, a
/// `[models.<id>]` entry for one model.
#[tokio::test]
async fn the_apply_patch_form_is_a_config_key() {
    async fn offered(extra: &[&str], model: &str) -> Value {
        let (_dir, cwd) = tempdir();
        let script = Script::new([message_reply("r1", "m", &["ok"])]);
        let mut params = thread_params(&cwd, "never", "read-only");
        params["model"] = json!(model);
        let mut s = session(script, extra, params).await;
        single_turn_end(&s.run_turn("hi").await, "completed");
        let bodies = s.bodies(1).await;
        bodies[0]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|tool| tool["name"] == "apply_patch")
            .cloned()
            .unwrap_or_else(|| panic!("no apply_patch tool in {:#}", bodies[0]))
    }
    let function = offered(&["apply_patch_tool_type=\"function\""], "gpt-5").await;
    assert_eq!(function["type"], "function");
    assert_eq!(function["parameters"]["required"], json!(["input"]));
    let freeform = offered(
        &[
            "apply_patch_tool_type=\"function\"",
            "models.local-coder.apply_patch_tool_type=\"freeform\"",
        ],
        "local-coder",
    )
    .await;
    assert_eq!(freeform["type"], "custom");
    assert_eq!(freeform["format"]["syntax"], "lark");
    // Without the key, the family decides (a non-GPT-5 model gets the function).
    assert_eq!(offered(&[], "local-coder").await["type"], "function");
}

/// `bash -lc "apply_patch <<'EOF' …"` and `cd sub && apply_patch <<'EOF' …` are patches too:
/// applied (relative to the `cd` and `workdir`), never run, and gated like any patch.
#[tokio::test]
async fn shell_wrapped_and_cd_heredocs_are_applied_as_patches() {
    let (_dir, cwd) = tempdir();
    std::fs::create_dir_all(cwd.join("pkg/sub")).unwrap();
    let add =
        |name: &str| format!("*** Begin Patch\n*** Add File: {name}\n+{name}\n*** End Patch\n");
    let wrapped = format!(
        "bash -lc \"apply_patch <<'EOF'\n{}EOF\n\"",
        add("wrapped.txt")
    );
    let in_sub = format!("cd sub && apply_patch <<'EOF'\n{}EOF\n", add("cd.txt"));
    let escaping = format!(
        "bash -lc 'apply_patch <<\"EOF\"\n{}EOF\n'",
        add("../../outside.txt")
    );
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .exec_call("fc_1", "call_w", json!({"cmd": wrapped}))
            .completed(Usage::small(), None)
            .build(),
        ResponseBuilder::new("r2")
            .created()
            .exec_call("fc_2", "call_c", json!({"cmd": in_sub, "workdir": "pkg"}))
            .completed(Usage::small(), None)
            .build(),
        ResponseBuilder::new("r3")
            .created()
            .exec_call("fc_3", "call_e", json!({"cmd": escaping, "workdir": "pkg"}))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r4", "m", &["ok"]),
    ]);
    let mut s = session(script, &[], thread_params(&cwd, "never", "workspace-write")).await;
    let turn = s.run_turn("edit").await;
    single_turn_end(&turn, "completed");
    assert_eq!(read(&cwd, "wrapped.txt").as_deref(), Some("wrapped.txt\n"));
    assert_eq!(read(&cwd, "pkg/sub/cd.txt").as_deref(), Some("cd.txt\n"));
    let outside = cwd.parent().map(|p| p.join("outside.txt"));
    assert!(outside.is_some_and(|p| !p.exists()));
    assert!(items_of(&turn, "item/started", "commandExecution").is_empty());
    let items = items_of(&turn, "item/completed", "fileChange");
    let statuses: Vec<&Value> = items.iter().map(|item| &item["status"]).collect();
    assert_eq!(statuses, vec!["completed", "completed", "declined"]);
    assert_eq!(
        items[1]["changes"][0]["path"],
        cwd.join("pkg/sub/cd.txt").display().to_string()
    );
    let bodies = s.bodies(4).await;
    assert!(output_for(&bodies[1], "call_w").starts_with("Success."));
    assert!(output_for(&bodies[3], "call_e").contains("outside the writable roots"));
}
