//! Issue 26's attacks on the sandbox, each a `command/exec` request to the real daemon with
//! approval out of the picture (the request is the client's own), in namespace mode and in the
//! fallback (`-c sandbox_isolation=fallback`), with the daemon running as root and as an
//! unprivileged user (`nobody`, through `setpriv`; every file it attacks is its own, so only the
//! sandbox stands in the way):
//!
//! - metadata outside the writable roots under `read-only`: `chmod 4755`, `chown`, `touch -d`,
//!   a user xattr; and setting a setuid bit outside the roots under `workspace-write`;
//! - capabilities: none left, `hostname`, a raw socket with the network on;
//! - the daemon: `prlimit` and `renice` on its pid, its `/proc/<pid>/environ`;
//! - a pathname UNIX socket outside the workspace with the network off;
//! - a repository root: `mkdir target` works in namespace mode (and, documented, not in the
//!   fallback), `.git/config` and a nested repository's hooks stay read-only in both;
//! - another command's private temp dir cannot be read, and (namespace mode) the temp dir's size
//!   is bounded.
//!
//! What the fallback cannot contain is asserted to be named in its warning
//! (`sandbox_environment.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use base64::Engine;
use serde_json::{json, Value};
use support::*;

const NOBODY: u32 = 65534;
/// Used by every attack that needs Python: the system one, which `nobody` can run too.
const PYTHON: &str = "/usr/bin/python3";
/// The daemon's provider key: it must never show up in a command's output.
const KEY: &str = "sk-test-secret-key";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Namespaces,
    Fallback,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum User {
    Root,
    Nobody,
}

impl User {
    fn uid(self) -> u32 {
        match self {
            User::Root => 0,
            User::Nobody => NOBODY,
        }
    }
}

/// A directory owned by the daemon's user; outside `/tmp` unless `in_tmp`, so namespace mode's
/// private `/tmp` cannot be what hides it.
fn owned_dir(user: User, in_tmp: bool) -> tempfile::TempDir {
    let dir = if in_tmp {
        tempfile::tempdir().unwrap()
    } else {
        support::outside_tmp::outside_tmp_dir()
    };
    chown_tree(dir.path(), user);
    dir
}

fn chown_tree(path: &Path, user: User) {
    let status = std::process::Command::new("chown")
        .arg("-R")
        .arg(format!("{0}:{0}", user.uid()))
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// The daemon as `user`, isolated as `mode`, with the provider key in its environment.
async fn daemon(mode: Mode, user: User) -> (Daemon, tempfile::TempDir, MockProvider) {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = owned_dir(user, true);
    let mut command = match user {
        User::Root => tokio::process::Command::new(openturn_bin()),
        User::Nobody => {
            let mut command = tokio::process::Command::new("setpriv");
            command
                .arg(format!("--reuid={NOBODY}"))
                .arg(format!("--regid={NOBODY}"))
                .args(["--clear-groups", "--"])
                .arg(openturn_bin());
            command
        }
    };
    let isolation = match mode {
        Mode::Namespaces => "namespaces",
        Mode::Fallback => "fallback",
    };
    for o in mock_overrides(&provider) {
        command.arg("-c").arg(o);
    }
    command
        .arg("-c")
        .arg(format!("sandbox_isolation={isolation}"))
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut daemon = Daemon::from_command(command);
    daemon.initialize().await;
    let config = daemon.ok("config/read", json!({})).await;
    assert_eq!(config["config"]["sandbox_isolation"], isolation);
    (daemon, home, provider)
}

/// Runs `sh -c script` in `cwd` under `policy`; (exit code, stdout, stderr).
async fn run(
    daemon: &mut Daemon,
    cwd: &Path,
    policy: Value,
    script: &str,
) -> (i64, String, String) {
    let result = daemon
        .ok(
            "command/exec",
            json!({"command": ["sh", "-c", script], "cwd": cwd.display().to_string(),
                   "sandboxPolicy": policy, "timeoutMs": 30000}),
        )
        .await;
    (
        result["exitCode"].as_i64().unwrap_or(-1),
        result["stdout"].as_str().unwrap_or_default().to_string(),
        result["stderr"].as_str().unwrap_or_default().to_string(),
    )
}

fn read_only() -> Value {
    json!({"type": "readOnly"})
}

fn workspace_write(network: bool) -> Value {
    json!({"type": "workspaceWrite", "networkAccess": network})
}

/// What the kernel says when Landlock, seccomp, a read-only mount or a missing capability
/// refuses something.
const DENIALS: &[&str] = &[
    "Permission denied",
    "not permitted",
    "Read-only file system",
    "PermissionError",
    "must be root",
];

/// Asserts a refused attack: a failed exit with the kernel's refusal in its output.
fn refused(what: &str, result: &(i64, String, String)) {
    assert_failed_with(what, result, DENIALS);
}

/// Asserts an attack that was refused, or found nothing to attack (its target is not in the
/// command's namespaces at all).
fn refused_or_unseen(what: &str, result: &(i64, String, String)) {
    let mut expected = DENIALS.to_vec();
    expected.push("No such");
    assert_failed_with(what, result, &expected);
}

fn assert_failed_with(what: &str, (code, stdout, stderr): &(i64, String, String), said: &[&str]) {
    let output = format!("{stdout}{stderr}");
    assert!(
        *code != 0 && said.iter().any(|text| output.contains(text)),
        "{what} was not refused: exit {code}\n{output}"
    );
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

async fn metadata_outside_the_roots_is_untouchable(daemon: &mut Daemon, user: User) {
    let workspace = owned_dir(user, true);
    let outside = owned_dir(user, false);
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "x").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    chown_tree(&victim, user);
    let before = std::fs::metadata(&victim).unwrap();
    let path = victim.display();
    let uid = user.uid();
    let attacks = [
        ("chmod 4755", format!("chmod 4755 {path}")),
        ("chown", format!("chown {uid}:{uid} {path}")),
        ("touch -d", format!("touch -d 2001-01-01 {path}")),
        (
            "a user xattr",
            format!("{PYTHON} -c \"import os; os.setxattr('{path}', 'user.openturn', b'1')\""),
        ),
    ];
    for (what, script) in &attacks {
        let result = run(daemon, workspace.path(), read_only(), script).await;
        refused(&format!("{what} under read-only"), &result);
    }
    let result = run(
        daemon,
        workspace.path(),
        workspace_write(false),
        &attacks[0].1,
    )
    .await;
    refused(
        "chmod 4755 outside the roots under workspace-write",
        &result,
    );
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(mode_of(&victim), 0o644);
    assert_eq!(after.mtime(), before.mtime());
    let xattrs = std::process::Command::new(PYTHON)
        .arg("-c")
        .arg(format!("import os; print(os.listxattr('{path}'))"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&xattrs.stdout), "[]\n");
}

async fn no_capability_is_left(daemon: &mut Daemon, user: User) {
    let workspace = owned_dir(user, true);
    let (code, stdout, _) = run(
        daemon,
        workspace.path(),
        read_only(),
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
    )
    .await;
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    for line in stdout.lines() {
        // An unprivileged process cannot empty its bounding set (that needs CAP_SETPCAP) and
        // needs not: with no_new_privs, exec never grants a capability it lacks.
        if user == User::Nobody && line.starts_with("CapBnd") {
            continue;
        }
        assert!(line.ends_with("0000000000000000"), "{stdout}");
    }
    let result = run(
        daemon,
        workspace.path(),
        read_only(),
        "hostname \"$(hostname)\"",
    )
    .await;
    refused("setting the hostname", &result);
    let raw =
        format!("{PYTHON} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)\"");
    let result = run(daemon, workspace.path(), workspace_write(true), &raw).await;
    refused("a raw socket with the network on", &result);
}

/// `Max core file size` in the daemon's limits, and its nice value.
fn daemon_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let core = limits
        .lines()
        .find(|line| line.starts_with("Max core file size"))
        .unwrap_or_default()
        .to_string();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let nice = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(16))
        .unwrap_or_default()
        .to_string();
    (core, nice)
}

async fn the_daemon_is_out_of_reach(daemon: &mut Daemon, user: User) {
    let pid = daemon.child.id().unwrap();
    let workspace = owned_dir(user, true);
    let before = daemon_limits(pid);
    for (what, script) in [
        (
            "prlimit on the daemon",
            format!("prlimit --pid {pid} --core=4096:4096"),
        ),
        ("renice of the daemon", format!("renice -n 7 -p {pid}")),
        (
            "the daemon's environment",
            format!("cat /proc/{pid}/environ"),
        ),
    ] {
        let result = run(daemon, workspace.path(), workspace_write(false), &script).await;
        assert!(!result.1.contains(KEY), "{what}: {result:?}");
        refused_or_unseen(what, &result);
    }
    // `$PPID`: the daemon itself in the fallback, the namespace's init in namespace mode.
    let via_parent = "prlimit --pid $PPID --core=4096:4096; renice -n 7 -p $PPID; \
                      cat /proc/$PPID/environ";
    let result = run(daemon, workspace.path(), workspace_write(false), via_parent).await;
    assert!(!result.1.contains(KEY), "{result:?}");
    assert_eq!(
        daemon_limits(pid),
        before,
        "the daemon's limits or priority changed"
    );
}

async fn unix_sockets_outside_are_unreachable_without_network(daemon: &mut Daemon, user: User) {
    let workspace = owned_dir(user, true);
    let outside = owned_dir(user, false);
    let path = outside.path().join("service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "{PYTHON} -c \"import socket; s = socket.socket(socket.AF_UNIX); \
         s.connect('{}'); print('connected')\"",
        path.display()
    );
    for policy in [read_only(), workspace_write(false)] {
        let result = run(daemon, workspace.path(), policy, &connect).await;
        refused("connecting to a UNIX socket outside", &result);
    }
    assert!(
        listener
            .accept()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "a confined command reached the socket"
    );
}

async fn a_repository_root_takes_new_entries_but_git_stays_read_only(
    daemon: &mut Daemon,
    mode: Mode,
    user: User,
) {
    let repo = owned_dir(user, true);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(repo.path())
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::create_dir_all(repo.path().join("vendor/lib/.git/hooks")).unwrap();
    chown_tree(repo.path(), user);
    let config = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    let policy = workspace_write(false);
    let result = run(
        daemon,
        repo.path(),
        policy.clone(),
        "mkdir target && echo o > target/x",
    )
    .await;
    match mode {
        Mode::Namespaces => {
            assert_eq!(result.0, 0, "mkdir target in a repository root: {result:?}");
            assert!(repo.path().join("target/x").exists());
        }
        // The documented limit of the fallback (Landlock cannot carve .git out of the root).
        Mode::Fallback => refused("mkdir target in the fallback", &result),
    }
    for (what, script) in [
        (".git/config", "echo '[core] hooksPath=/x' >> .git/config"),
        (
            "a nested hook",
            "echo evil > vendor/lib/.git/hooks/pre-commit",
        ),
        (
            "a hook from a subdirectory",
            "cd vendor && echo evil > lib/.git/hooks/post-checkout",
        ),
    ] {
        let result = run(daemon, repo.path(), policy.clone(), script).await;
        refused(what, &result);
    }
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/config")).unwrap(),
        config
    );
    let hooks = std::fs::read_dir(repo.path().join("vendor/lib/.git/hooks")).unwrap();
    assert_eq!(hooks.count(), 0);
}

async fn another_commands_temp_dir_is_out_of_reach(daemon: &mut Daemon, mode: Mode, user: User) {
    let workspace = owned_dir(user, true);
    let stop = workspace.path().join("stop");
    let holder = format!(
        "echo secret > \"$TMPDIR/secret\" && echo \"$TMPDIR/secret\" && \
         while [ ! -e {} ]; do sleep 0.05; done",
        stop.display()
    );
    let id = daemon
        .send_request(
            "command/exec",
            json!({"command": ["sh", "-c", holder], "cwd": workspace.path().display().to_string(),
                   "sandboxPolicy": read_only(), "processId": "holder",
                   "streamStdoutStderr": true, "timeoutMs": 30000}),
        )
        .await;
    let delta = daemon.notification("command/exec/outputDelta").await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(delta["params"]["deltaBase64"].as_str().unwrap_or_default())
        .unwrap();
    let secret = String::from_utf8_lossy(&bytes).trim().to_string();
    assert!(secret.ends_with("/secret"), "{secret}");
    for policy in [read_only(), workspace_write(false)] {
        let result = run(daemon, workspace.path(), policy, &format!("cat {secret}")).await;
        assert!(!result.1.contains("secret\n"), "{result:?}");
        refused_or_unseen("reading another command's temp file", &result);
    }
    std::fs::write(&stop, "").unwrap();
    let response = daemon.response_to(id).await;
    assert_eq!(response["result"]["exitCode"], 0, "{response}");
    if mode == Mode::Namespaces {
        let result = run(
            daemon,
            workspace.path(),
            read_only(),
            "fallocate -l 2G \"$TMPDIR/big\"",
        )
        .await;
        assert!(
            result.0 != 0 && result.2.contains("No space left"),
            "the private /tmp has no size bound: {result:?}"
        );
    }
}

async fn every_attack(mode: Mode, user: User) {
    let (mut daemon, _home, _provider) = daemon(mode, user).await;
    metadata_outside_the_roots_is_untouchable(&mut daemon, user).await;
    no_capability_is_left(&mut daemon, user).await;
    the_daemon_is_out_of_reach(&mut daemon, user).await;
    unix_sockets_outside_are_unreachable_without_network(&mut daemon, user).await;
    a_repository_root_takes_new_entries_but_git_stays_read_only(&mut daemon, mode, user).await;
    another_commands_temp_dir_is_out_of_reach(&mut daemon, mode, user).await;
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn namespace_mode_contains_every_attack_from_a_root_daemon() {
    every_attack(Mode::Namespaces, User::Root).await;
}

#[tokio::test]
async fn namespace_mode_contains_every_attack_from_an_unprivileged_daemon() {
    every_attack(Mode::Namespaces, User::Nobody).await;
}

#[tokio::test]
async fn the_fallback_contains_what_it_can_from_a_root_daemon() {
    every_attack(Mode::Fallback, User::Root).await;
}

#[tokio::test]
async fn the_fallback_contains_what_it_can_from_an_unprivileged_daemon() {
    every_attack(Mode::Fallback, User::Nobody).await;
}
