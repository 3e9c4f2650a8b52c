use super::*;
use crate::core::tools::apply_patch::parser::parse_patch;
use crate::sandbox::{SandboxPolicy, WritableArea};

/// A writer confined to `dir`, as under `workspace-write`.
fn writer(dir: &Path) -> ConfinedWriter {
    let policy = SandboxPolicy::WorkspaceWrite {
        network_access: false,
    };
    ConfinedWriter::new(&WritableArea::new(&policy, dir, &[], &[]).unwrap())
}

fn plan(dir: &Path, patch: &str) -> Result<Vec<PlannedChange>, ApplyError> {
    let Ok(parsed) = parse_patch(patch) else {
        panic!("test patch should parse")
    };
    plan_changes(&parsed, dir)
}

fn run(dir: &Path, patch: &str) -> Result<(), ApplyError> {
    let planned = plan(dir, patch)?;
    commit_changes(&planned, &writer(dir))
}

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

#[test]
fn add_update_delete_and_move_apply_exactly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("old.txt"), "keep\nchange me\n").unwrap();
    std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    let patch = "*** Begin Patch
*** Add File: sub/new.txt
+hello
*** Update File: a.txt
@@
 one
-two
+2
 three
*** Update File: old.txt
*** Move to: moved/new_name.txt
@@
 keep
-change me
+changed
*** Delete File: gone.txt
*** End Patch";
    run(dir.path(), patch).unwrap();
    assert_eq!(read(dir.path(), "sub/new.txt").as_deref(), Some("hello\n"));
    assert_eq!(
        read(dir.path(), "a.txt").as_deref(),
        Some("one\n2\nthree\n")
    );
    assert_eq!(read(dir.path(), "old.txt"), None);
    assert_eq!(
        read(dir.path(), "moved/new_name.txt").as_deref(),
        Some("keep\nchanged\n")
    );
    assert_eq!(read(dir.path(), "gone.txt"), None);
    // No staging file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with(".openturn-write")
        })
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_hunk_that_does_not_match_changes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\nbeta\n").unwrap();
    let patch = "*** Begin Patch
*** Update File: a.txt
-one
+ONE
*** Add File: c.txt
+new
*** Update File: b.txt
@@ alpha
-gamma
+delta
*** End Patch";
    let error = run(dir.path(), patch)
        .err()
        .unwrap_or_else(|| panic!("the patch should fail"));
    assert_eq!(
        error.to_string(),
        "b.txt: hunk 1 (after \"@@ alpha\") did not match the file; expected these lines (no file was changed):\ngamma"
    );
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(dir.path(), "c.txt"), None);
}

#[test]
fn a_failed_rename_rolls_back_the_files_already_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    // The target of the second change is a directory, so its rename fails after a.txt's.
    std::fs::create_dir(dir.path().join("blocker")).unwrap();
    std::fs::write(dir.path().join("blocker/inner"), "x").unwrap();
    let patch = "*** Begin Patch
*** Update File: a.txt
-one
+ONE
*** Add File: blocker
+text
*** End Patch";
    let error = run(dir.path(), patch)
        .err()
        .unwrap_or_else(|| panic!("the patch should fail"));
    assert!(matches!(error, ApplyError::Write { .. }), "{error}");
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(dir.path(), "blocker/inner").as_deref(), Some("x"));
}

/// A file edited between the read and the write (while the user was asked) fails the patch, and
/// the edit survives, as does every other file.
#[test]
fn a_file_changed_after_planning_fails_the_patch_and_keeps_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.txt"), "two\n").unwrap();
    let patch = "*** Begin Patch
*** Add File: new.txt
+new
*** Update File: a.txt
-one
+ONE
*** Update File: b.txt
-two
+TWO
*** End Patch";
    let planned = plan(dir, patch).unwrap();
    std::fs::write(dir.join("b.txt"), "two\nedited meanwhile\n").unwrap();
    let error = commit_changes(&planned, &writer(dir)).unwrap_err();
    assert!(
        matches!(&error, ApplyError::ChangedMeanwhile { path } if path.ends_with("b.txt")),
        "{error}"
    );
    assert_eq!(
        read(dir, "b.txt").as_deref(),
        Some("two\nedited meanwhile\n")
    );
    assert_eq!(read(dir, "a.txt").as_deref(), Some("one\n"));
    assert_eq!(read(dir, "new.txt"), None);
    // A file created where the patch adds one counts as a change too.
    let planned = plan(
        dir,
        "*** Begin Patch\n*** Add File: late.txt\n+x\n*** End Patch",
    )
    .unwrap();
    std::fs::write(dir.join("late.txt"), "someone else's\n").unwrap();
    assert!(matches!(
        commit_changes(&planned, &writer(dir)),
        Err(ApplyError::ChangedMeanwhile { .. })
    ));
    assert_eq!(read(dir, "late.txt").as_deref(), Some("someone else's\n"));
}

#[test]
fn hunks_apply_in_order_with_context_headers_and_end_of_file() {
    let old = "fn a() {\n    x\n}\nfn b() {\n    x\n}\nx\n";
    let Ok(parsed) = parse_patch(
        "*** Begin Patch\n*** Update File: f\n@@ fn b() {\n-    x\n+    y\n@@\n-x\n+z\n*** End of File\n*** End Patch",
    ) else {
        panic!("should parse")
    };
    let FileOp::Update { hunks, .. } = &parsed.files[0] else {
        panic!("update expected")
    };
    assert_eq!(
        apply_hunks(old, hunks, "f").unwrap(),
        "fn a() {\n    x\n}\nfn b() {\n    y\n}\nz\n"
    );
}
