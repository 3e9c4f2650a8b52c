//! The confined writer against a real file system: it writes where the area allows, refuses a
//! link anywhere on the way, and stays inside the area when a directory is swapped for a link
//! between the area's check and the write, or between staging and committing. Each case runs
//! with `openat2` (where the kernel has it) and with the component walk.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{ConfinedWriter, WriteError};
use crate::sandbox::policy::SandboxPolicy;
use crate::sandbox::writable::{WritableArea, WriteDenied};

const WORKSPACE: SandboxPolicy = SandboxPolicy::WorkspaceWrite {
    network_access: false,
};

/// A workspace `work/` (with `.git/`) and a directory `outside/` next to it.
struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    work: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let work = base.join("work");
    let outside = base.join("outside");
    for path in [&work, &outside, &work.join(".git"), &work.join("sub")] {
        std::fs::create_dir_all(path).unwrap();
    }
    Fixture {
        _dir: dir,
        base,
        work,
        outside,
    }
}

fn area(cwd: &Path) -> WritableArea {
    WritableArea::new(&WORKSPACE, cwd, &[], &[]).unwrap()
}

/// Both ways of resolving: `openat2` first (where the kernel has it), and the walk alone.
const WALK: [bool; 2] = [false, true];

fn writer(area: &WritableArea, walk: bool) -> ConfinedWriter {
    let writer = ConfinedWriter::new(area);
    if walk {
        writer.walking_only()
    } else {
        writer
    }
}

fn writers(area: &WritableArea) -> [ConfinedWriter; 2] {
    WALK.map(|walk| writer(area, walk))
}

fn write(writer: &ConfinedWriter, path: &Path, content: &str) -> Result<(), WriteError> {
    writer.stage(path, content.as_bytes())?.commit()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn it_writes_reads_and_removes_beneath_the_root_keeping_modes() {
    for walk in WALK {
        let f = fixture();
        let writer = writer(&area(&f.work), walk);
        let nested = f.work.join("new/deeper/file.txt");
        assert_eq!(writer.read(&nested).unwrap(), None);
        write(&writer, &nested, "one\n").unwrap();
        assert_eq!(std::fs::read_to_string(&nested).unwrap(), "one\n");
        assert_eq!(
            writer.read(&nested).unwrap().as_deref(),
            Some(&b"one\n"[..])
        );

        let script = f.work.join("run.sh");
        std::fs::write(&script, "old").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
        write(&writer, &script, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&script).unwrap(), "new");
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o750);

        // `.` and `..` are taken as written, inside the root.
        write(&writer, &f.work.join("sub/./x/../dotted.txt"), "d").unwrap();
        assert_eq!(
            std::fs::read_to_string(f.work.join("sub/dotted.txt")).unwrap(),
            "d"
        );

        writer.remove(&nested).unwrap();
        assert!(!nested.exists());
        // No temporary file is left anywhere.
        assert_eq!(entries(&f.work.join("new/deeper")), Vec::<String>::new());
        // A staged write dropped without commit leaves nothing.
        drop(writer.stage(&f.work.join("never.txt"), b"x").unwrap());
        assert!(!entries(&f.work)
            .iter()
            .any(|name| name.starts_with(".openturn")));
        assert!(!f.work.join("never.txt").exists());
    }
}

#[test]
fn paths_outside_the_area_or_protected_are_refused_unless_allowed() {
    let f = fixture();
    for writer in writers(&area(&f.work)) {
        let escaping = f.work.join("../outside/x.txt");
        assert!(matches!(
            write(&writer, &escaping, "x"),
            Err(WriteError::Denied(WriteDenied::Outside { .. }))
        ));
        assert!(matches!(
            write(&writer, &f.work.join(".git/hooks/pre-commit"), "x"),
            Err(WriteError::Denied(WriteDenied::Protected { .. }))
        ));
        assert!(matches!(
            write(&writer, Path::new("relative.txt"), "x"),
            Err(WriteError::BadPath { .. })
        ));
        assert_eq!(entries(&f.outside), Vec::<String>::new());
        assert!(!f.work.join(".git/hooks").exists());

        // The user approved exactly this path: it is written, and nothing else outside is.
        let approved = f.outside.join("approved.txt");
        let writer = writer.allow_outside([approved.clone()]);
        write(&writer, &approved, "yes").unwrap();
        assert_eq!(std::fs::read_to_string(&approved).unwrap(), "yes");
        assert!(write(&writer, &f.outside.join("other.txt"), "no").is_err());
        std::fs::remove_file(&approved).unwrap();
    }
}

#[test]
fn a_root_named_through_a_link_is_written_beneath_its_real_directory() {
    let f = fixture();
    let alias = f.base.join("alias");
    symlink(&f.work, &alias).unwrap();
    for writer in writers(&area(&alias)) {
        write(&writer, &alias.join("sub/by-alias.txt"), "a").unwrap();
        assert_eq!(
            std::fs::read_to_string(f.work.join("sub/by-alias.txt")).unwrap(),
            "a"
        );
        std::fs::remove_file(f.work.join("sub/by-alias.txt")).unwrap();
    }
}

#[test]
fn a_link_anywhere_on_the_way_is_not_followed() {
    let f = fixture();
    std::fs::write(f.outside.join("secret.txt"), "outside\n").unwrap();
    symlink(&f.outside, f.work.join("out")).unwrap();
    symlink(f.outside.join("secret.txt"), f.work.join("secret.txt")).unwrap();
    // A link pointing inside the area is refused too: its target could change after a look.
    symlink(f.work.join("sub"), f.work.join("inner")).unwrap();
    for writer in writers(&area(&f.work)) {
        for path in ["out/x.txt", "out/new/x.txt", "inner/x.txt"] {
            let result = write(&writer, &f.work.join(path), "x");
            assert!(
                matches!(result, Err(WriteError::ThroughLink { .. })),
                "{path}: {result:?}"
            );
            assert!(matches!(
                writer.read(&f.work.join(path)),
                Err(WriteError::ThroughLink { .. }) | Ok(None)
            ));
        }
        // A link in the file's own place is not read through.
        assert!(matches!(
            writer.read(&f.work.join("secret.txt")),
            Err(WriteError::ThroughLink { .. })
        ));
        assert!(matches!(
            writer.remove(&f.work.join("out/secret.txt")),
            Err(WriteError::ThroughLink { .. })
        ));
    }
    assert_eq!(entries(&f.outside), vec!["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "outside\n"
    );
    assert_eq!(entries(&f.work.join("sub")), Vec::<String>::new());
}

/// The race the writer exists for: the area's check sees a directory, then a command swaps it
/// for a link to elsewhere before the write.
#[test]
fn a_directory_swapped_for_a_link_after_the_check_stops_the_write() {
    for walk in WALK {
        let f = fixture();
        let area = area(&f.work);
        let writer = writer(&area, walk);
        let target = f.work.join("sub/file.txt");
        assert_eq!(area.check(&target), Ok(()));
        std::fs::rename(f.work.join("sub"), f.work.join("sub.old")).unwrap();
        symlink(&f.outside, f.work.join("sub")).unwrap();
        let result = write(&writer, &target, "x");
        assert!(
            matches!(result, Err(WriteError::ThroughLink { .. })),
            "{result:?}"
        );
        assert_eq!(entries(&f.outside), Vec::<String>::new());
    }
}

/// Once the directory is open, swapping it afterwards changes nothing: the write lands in the
/// directory that was checked (now renamed), never behind the link.
#[test]
fn a_directory_swapped_between_staging_and_commit_keeps_the_write_inside() {
    for walk in WALK {
        let f = fixture();
        let writer = writer(&area(&f.work), walk);
        let staged = writer.stage(&f.work.join("sub/file.txt"), b"x").unwrap();
        std::fs::rename(f.work.join("sub"), f.work.join("sub.old")).unwrap();
        symlink(&f.outside, f.work.join("sub")).unwrap();
        staged.commit().unwrap();
        assert_eq!(entries(&f.outside), Vec::<String>::new());
        assert_eq!(
            std::fs::read_to_string(f.work.join("sub.old/file.txt")).unwrap(),
            "x"
        );
    }
}

#[test]
fn the_unconfined_policies_write_anywhere() {
    let f = fixture();
    let area = WritableArea::new(&SandboxPolicy::DangerFullAccess, &f.work, &[], &[]).unwrap();
    let writer = ConfinedWriter::new(&area);
    write(&writer, &f.outside.join("new/free.txt"), "free").unwrap();
    assert_eq!(
        std::fs::read_to_string(f.outside.join("new/free.txt")).unwrap(),
        "free"
    );
}
