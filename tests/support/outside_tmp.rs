//! A scratch directory that is outside `/tmp`, for tests that check what a sandboxed command
//! may do to a path outside every writable root.
//!
//! In namespace mode, the command gets its own fresh `/tmp`. A victim under the host's `/tmp`
//! would then be invisible to it, and the command would fail with "no such file" rather than a
//! refusal. The test would then fail to show the confinement it claims to show.
//!
//! Such directories live under cargo's target dir, unless that dir is itself in `/tmp` (a
//! checkout in `/tmp`); then they go in `/var/tmp`, which neither sandbox mode replaces or lets
//! a command write.

use std::path::Path;

/// A fresh directory outside `/tmp`, removed when dropped.
pub fn outside_tmp_dir() -> tempfile::TempDir {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let parent = if target.starts_with("/tmp") {
        Path::new("/var/tmp")
    } else {
        target
    };
    tempfile::tempdir_in(parent)
        .unwrap_or_else(|e| panic!("a scratch directory in {}: {e}", parent.display()))
}
