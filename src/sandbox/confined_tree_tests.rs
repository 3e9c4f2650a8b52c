//! The tree operations against a real file system, with `openat2` and with the component walk:
//! links inside a tree are unlinked or recreated, never followed; a link in the path fails; a
//! directory is never copied into itself; a root is never removed.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::{EntryKind, TreeError};
use crate::sandbox::confined_writer::{ConfinedWriter, WriteError};
use crate::sandbox::writable::WritableArea;

/// A root `work/` and a directory `outside/` beside it holding `secret`.
fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (work, outside) = (base.join("work"), base.join("outside"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    (dir, work, outside)
}

fn writers(root: &Path) -> [ConfinedWriter; 2] {
    let area = WritableArea::of_roots(&[root.to_path_buf()]);
    [
        ConfinedWriter::new(&area),
        ConfinedWriter::new(&area).walking_only(),
    ]
}

fn names(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    found
}

#[test]
fn removing_a_tree_unlinks_its_links_and_keeps_their_targets() {
    for walk in [false, true] {
        let (_dir, work, outside) = fixture();
        let [preferred, walking] = writers(&work);
        let writer = if walk { walking } else { preferred };
        std::fs::create_dir_all(work.join("tree/inner")).unwrap();
        std::fs::write(work.join("tree/inner/file"), "x").unwrap();
        symlink(&outside, work.join("tree/inner/out")).unwrap();
        symlink(outside.join("secret"), work.join("tree/secret-link")).unwrap();
        writer.remove_path(&work.join("tree"), true, false).unwrap();
        assert_eq!(names(&work), Vec::<String>::new());
        assert_eq!(names(&outside), vec!["secret"]);
        assert!(matches!(
            writer.remove_path(&work, true, true),
            Err(TreeError::IsRoot { .. })
        ));
    }
}

#[test]
fn a_directory_swapped_for_a_link_is_not_entered() {
    let (_dir, work, outside) = fixture();
    symlink(&outside, work.join("sub")).unwrap();
    for writer in writers(&work) {
        for result in [
            writer.read_directory(&work.join("sub")).map(|_| ()),
            writer.read_directory(&work.join("sub/deeper")).map(|_| ()),
            writer.create_directory(&work.join("sub/made"), true),
            writer.create_directory(&work.join("sub/made"), false),
            writer.metadata(&work.join("sub/secret")).map(|_| ()),
        ] {
            assert!(
                matches!(result, Err(WriteError::ThroughLink { .. })),
                "{result:?}"
            );
        }
        assert!(matches!(
            writer.remove_path(&work.join("sub/secret"), false, false),
            Err(TreeError::Write(WriteError::ThroughLink { .. }))
        ));
        // The link itself is an entry of the root: it reads as a link, not a directory.
        assert_eq!(
            writer.metadata(&work.join("sub")).unwrap().kind,
            EntryKind::Symlink
        );
    }
    assert_eq!(names(&outside), vec!["secret"]);
}

#[test]
fn copying_a_tree_recreates_links_and_never_copies_into_itself() {
    let (_dir, work, outside) = fixture();
    std::fs::create_dir_all(work.join("src/inner")).unwrap();
    std::fs::write(work.join("src/inner/file"), "content").unwrap();
    symlink(&outside, work.join("src/out")).unwrap();
    for (index, writer) in writers(&work).into_iter().enumerate() {
        let copy = work.join(format!("copy{index}"));
        writer.copy_path(&work.join("src"), &copy, true).unwrap();
        assert_eq!(names(&copy), vec!["inner", "out"]);
        assert_eq!(std::fs::read_link(copy.join("out")).unwrap(), outside);
        assert_eq!(
            std::fs::read_to_string(copy.join("inner/file")).unwrap(),
            "content"
        );
        assert!(matches!(
            writer.copy_path(&work.join("src"), &work.join("src/inner/again"), true),
            Err(TreeError::IntoItself { .. })
        ));
        assert!(matches!(
            writer.copy_path(&work.join("src"), &work.join("elsewhere"), false),
            Err(TreeError::NeedsRecursive { .. })
        ));
    }
    assert_eq!(names(&outside), vec!["secret"]);
}
