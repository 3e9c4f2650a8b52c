//! The `bwrap` command line for one confined command: which namespaces it gets and what is
//! mounted where. Plain data in, argument vectors out; nothing here runs a process.
//!
//! The file system the command sees, in mount order:
//!
//! 1. the host's `/`, read-only (recursively: every mount below it too);
//! 2. the binds outside `/tmp`, `/dev` and `/proc`, parents before children, so a writable root
//!    is bound read-write and the `.git` directories and openturn's home inside it are bound
//!    read-only again on top;
//! 3. a minimal `/dev` (null, zero, full, random, urandom, tty, pts, shm), a `/proc` that shows
//!    only the command's own PID namespace, and a private `/tmp` (tmpfs) of [`PRIVATE_TMP_BYTES`];
//! 4. the binds under those three, which step 3 would otherwise hide (a workspace in `/tmp`).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The size of each command's private `/tmp`: room for a build's temporary files, yet a command
/// cannot fill the machine's memory through it.
pub(super) const PRIVATE_TMP_BYTES: u64 = 1 << 30;

/// Where bwrap mounts its own file systems over the host's (step 3 of the module doc).
const REPLACED: &[&str] = &["/tmp", "/dev", "/proc"];

/// One path bound into the sandbox at the same place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Bind {
    pub(super) path: PathBuf,
    pub(super) writable: bool,
}

impl Bind {
    pub(super) fn writable(path: &Path) -> Bind {
        Bind {
            path: path.to_path_buf(),
            writable: true,
        }
    }

    pub(super) fn read_only(path: &Path) -> Bind {
        Bind {
            path: path.to_path_buf(),
            writable: false,
        }
    }
}

/// The namespaces and process flags: new user (the caller's uid mapped, no capabilities), PID,
/// IPC, UTS and cgroup namespaces; a new network namespace (loopback only, down) when the
/// network is off; a new session, so the command has no controlling terminal to push input
/// into; and the command dies with the daemon.
pub(super) fn namespace_flags(network_access: bool) -> Vec<OsString> {
    let mut flags = vec![
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ];
    if !network_access {
        flags.push("--unshare-net");
    }
    flags.into_iter().map(OsString::from).collect()
}

/// Whether `path` lies under a place bwrap replaces, so it must be bound again to be seen.
pub(super) fn hidden_by_own_mounts(path: &Path) -> bool {
    REPLACED.iter().any(|replaced| path.starts_with(replaced))
}

/// The mount arguments for `binds` (see the module doc for the order).
pub(super) fn mounts(binds: &[Bind]) -> Vec<OsString> {
    let (mut after, mut before): (Vec<&Bind>, Vec<&Bind>) = binds
        .iter()
        .partition(|bind| hidden_by_own_mounts(&bind.path));
    // Parents first; at the same path the read-only bind last, so it wins.
    let order = |bind: &&Bind| (depth(&bind.path), !bind.writable);
    before.sort_by_key(order);
    after.sort_by_key(order);
    let mut args: Vec<OsString> = vec!["--ro-bind".into(), "/".into(), "/".into()];
    args.extend(before.into_iter().flat_map(bind_args));
    for arg in ["--dev", "/dev", "--proc", "/proc", "--size"] {
        args.push(arg.into());
    }
    args.push(PRIVATE_TMP_BYTES.to_string().into());
    args.push("--tmpfs".into());
    args.push("/tmp".into());
    args.extend(after.into_iter().flat_map(bind_args));
    args
}

/// The mounts of the startup probe: what every command gets, plus the helper binary.
pub(super) fn probe_mounts(helper: &Path) -> Vec<OsString> {
    let binds: Vec<Bind> = hidden_by_own_mounts(helper)
        .then(|| Bind::read_only(helper))
        .into_iter()
        .collect();
    mounts(&binds)
}

fn bind_args(bind: &Bind) -> [OsString; 3] {
    let flag = if bind.writable { "--bind" } else { "--ro-bind" };
    [
        flag.into(),
        bind.path.clone().into_os_string(),
        bind.path.clone().into_os_string(),
    ]
}

fn depth(path: &Path) -> usize {
    path.components()
        .filter(|component| matches!(component, Component::Normal(_)))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn git_is_bound_read_only_after_its_root_and_tmp_binds_come_after_the_tmpfs() {
        let binds = [
            Bind::read_only(Path::new("/work/repo/.git")),
            Bind::read_only(Path::new("/tmp/ws/.git")),
            Bind::writable(Path::new("/tmp/ws")),
            Bind::writable(Path::new("/work/repo")),
            Bind::read_only(Path::new("/work/repo/sub/.git")),
        ];
        let args = strings(&mounts(&binds));
        let size = PRIVATE_TMP_BYTES.to_string();
        let expected: Vec<&str> = vec![
            "--ro-bind",
            "/",
            "/",
            "--bind",
            "/work/repo",
            "/work/repo",
            "--ro-bind",
            "/work/repo/.git",
            "/work/repo/.git",
            "--ro-bind",
            "/work/repo/sub/.git",
            "/work/repo/sub/.git",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--size",
            &size,
            "--tmpfs",
            "/tmp",
            "--bind",
            "/tmp/ws",
            "/tmp/ws",
            "--ro-bind",
            "/tmp/ws/.git",
            "/tmp/ws/.git",
        ];
        assert_eq!(args, expected);
    }

    #[test]
    fn the_network_namespace_is_new_only_without_network() {
        assert!(strings(&namespace_flags(false)).contains(&"--unshare-net".to_string()));
        assert!(!strings(&namespace_flags(true)).contains(&"--unshare-net".to_string()));
        assert!(strings(&namespace_flags(true)).contains(&"--unshare-user".to_string()));
    }

    #[test]
    fn the_probe_binds_a_helper_only_where_tmp_would_hide_it() {
        assert_eq!(
            strings(&probe_mounts(Path::new("/usr/bin/openturn"))).len(),
            11
        );
        let hidden = strings(&probe_mounts(Path::new("/tmp/x/openturn")));
        assert_eq!(
            hidden[hidden.len() - 3..],
            ["--ro-bind", "/tmp/x/openturn", "/tmp/x/openturn"]
        );
    }
}
