//! A cgroup v2 per command, where the daemon may create one: every process of the command is
//! in it whatever it does (`setsid`, double forks, a cleared environment), and `cgroup.kill`
//! ends them all at once.
//!
//! The command cgroups are children of the daemon's own v2 cgroup (the `0::` line of
//! `/proc/self/cgroup`, found under the cgroup2 mount of `/proc/self/mountinfo`; hybrid hosts
//! mount it at `/sys/fs/cgroup/unified`). The leader joins its cgroup between fork and exec,
//! before any other hook (the sandbox would forbid the write), so nothing it starts is ever
//! outside. Where the cgroup cannot be created or joined (no v2 hierarchy, no `cgroup.kill`
//! before Linux 5.14, a cgroup the daemon does not own) nothing is said: the marker the sweep
//! reads is the fallback. `OPENTURN_COMMAND_CGROUPS=off` turns them off (hosts where the daemon
//! must not create cgroups, and the tests of the fallback).

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

/// The environment variable that turns command cgroups off (`off`, `0` or `false`).
const SWITCH: &str = "OPENTURN_COMMAND_CGROUPS";

/// Where command cgroups are created: the daemon's own v2 cgroup.
static PARENT: LazyLock<Option<PathBuf>> = LazyLock::new(find_parent);

/// Cleared when a command failed to join its cgroup: the next commands do not try again.
static USABLE: AtomicBool = AtomicBool::new(true);

fn find_parent() -> Option<PathBuf> {
    let switch = std::env::var(SWITCH).unwrap_or_default();
    if matches!(switch.as_str(), "off" | "0" | "false") {
        return None;
    }
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let dir = mounts.lines().find_map(|line| v2_dir(line, own))?;
    dir.is_dir().then_some(dir)
}

/// The directory of cgroup `own` under this mountinfo line, when it is a cgroup2 mount whose
/// root contains it.
fn v2_dir(mountinfo_line: &str, own: &str) -> Option<PathBuf> {
    let (mount, fs) = mountinfo_line.split_once(" - ")?;
    if fs.split_whitespace().next()? != "cgroup2" {
        return None;
    }
    let mut fields = mount.split_whitespace();
    let root = fields.nth(3)?;
    let mount_point = fields.next()?;
    let relative = if root == "/" {
        own
    } else {
        // `/user.slice` holds `/user.slice/a.scope`, not `/user.slicex`.
        let rest = own.strip_prefix(root)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        rest
    };
    Some(Path::new(mount_point).join(relative.trim_start_matches('/')))
}

/// One command's cgroup. Removed by [`CommandCgroup::remove`] once it is empty.
#[derive(Debug)]
pub(super) struct CommandCgroup {
    dir: PathBuf,
    /// `<dir>/cgroup.procs`, built before the fork: the child may not allocate.
    procs: CString,
}

impl CommandCgroup {
    /// Creates the cgroup of command `id`, or `None` where cgroups cannot be used.
    pub(super) fn create(id: &str) -> Option<CommandCgroup> {
        if !USABLE.load(Ordering::Relaxed) {
            return None;
        }
        let dir = PARENT.as_ref()?.join(format!("openturn-command-{id}"));
        if let Err(error) = std::fs::create_dir(&dir) {
            tracing::debug!(%error, "no cgroup for commands; the marker alone finds their processes");
            USABLE.store(false, Ordering::Relaxed);
            return None;
        }
        // Only a non-root cgroup has the file, so it is looked for in the new one.
        if !dir.join("cgroup.kill").exists() {
            tracing::debug!("cgroups cannot be killed here (before Linux 5.14); the marker alone finds commands' processes");
            USABLE.store(false, Ordering::Relaxed);
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok()?;
        Some(CommandCgroup { dir, procs })
    }

    /// Moves the calling process into the cgroup. Runs in the child between fork and exec: one
    /// open, write and close, nothing that allocates. A failure is not the command's: it runs,
    /// found by its marker only ([`Self::holds`] tells the parent).
    pub(super) fn join_in_child(&self) {
        // SAFETY: open/write/close on a path built before the fork; all async-signal-safe.
        unsafe {
            let fd = libc::open(self.procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd >= 0 {
                libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
            }
        }
    }

    /// Whether process `pid` is in this cgroup. When the leader did not get in, cgroups do not
    /// work here and later commands stop trying.
    pub(super) fn holds(&self, pid: i32) -> bool {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
            return false;
        };
        let Some(own) = text.lines().find_map(|line| line.strip_prefix("0::")) else {
            return false;
        };
        let name = self.dir.file_name().map(|name| name.as_bytes());
        let held = Path::new(own).file_name().map(|name| name.as_bytes()) == name;
        if !held {
            tracing::debug!(
                "a command did not join its cgroup; the marker alone finds its processes"
            );
            USABLE.store(false, Ordering::Relaxed);
        }
        held
    }

    /// The live processes in the cgroup (not in its sub-cgroups: those are a nested daemon's,
    /// killed with it).
    pub(super) fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Sends SIGKILL to every process in the cgroup and below it.
    pub(super) fn kill(&self) {
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.kill"))
            .and_then(|mut file| file.write_all(b"1"));
        if let Err(error) = written {
            tracing::debug!(%error, "cgroup.kill failed; the sweep kills process by process");
        }
    }

    /// Removes the cgroup and any sub-cgroups a nested daemon left; fails while processes
    /// remain, so call it once the sweep found none.
    pub(super) fn remove(&self) -> bool {
        remove_tree(&self.dir)
    }
}

/// Removes a cgroup directory, sub-cgroups first (its interface files go with `rmdir`).
fn remove_tree(dir: &Path) -> bool {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                remove_tree(&entry.path());
            }
        }
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => true,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => true,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemons_v2_cgroup_is_found_under_the_cgroup2_mount() {
        let hybrid = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";
        assert_eq!(
            v2_dir(hybrid, "/user.slice/a.scope"),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/a.scope"))
        );
        assert_eq!(
            v2_dir(hybrid, "/"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        // A mount of a sub-tree: the path is relative to its root.
        let nested = "50 31 0:38 /user.slice /mnt/cg rw - cgroup2 cgroup2 rw";
        assert_eq!(
            v2_dir(nested, "/user.slice/a.scope"),
            Some(PathBuf::from("/mnt/cg/a.scope"))
        );
        assert_eq!(v2_dir(nested, "/system.slice/b.service"), None);
        assert_eq!(v2_dir(nested, "/user.slicex/c.scope"), None);
        let v1 = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory";
        assert_eq!(v2_dir(v1, "/"), None);
    }
}
