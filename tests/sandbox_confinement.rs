//! The sandbox confines real child processes: each test prepares a policy through the library
//! API, spawns `sh` (or `python3` for socket and syscall probes) as `PreparedSandbox::command`
//! builds it, and checks what the child could and could not do — in namespace mode (bwrap, with
//! the openturn binary as the helper inside) and in the fallback mode alike.

#![allow(clippy::expect_used)] // A failed unwrap fails the test.
#![allow(
    clippy::unwrap_used,
    reason = "a failing test should stop at the line that failed"
)]

#[path = "support/outside_tmp.rs"]
mod outside_tmp;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use openturn::sandbox::{
    Isolation, IsolationMode, PreparedSandbox, SandboxError, SandboxPolicy, SandboxSetup,
};

const TIMEOUT: Duration = Duration::from_secs(30);

const READ_ONLY: SandboxPolicy = SandboxPolicy::ReadOnly {
    network_access: false,
};
const WORKSPACE: SandboxPolicy = SandboxPolicy::WorkspaceWrite {
    network_access: false,
};
const WORKSPACE_WITH_NETWORK: SandboxPolicy = SandboxPolicy::WorkspaceWrite {
    network_access: true,
};

/// Both modes; this machine is expected to have bwrap and user namespaces (`.ci/run` installs
/// bubblewrap), so namespaces are required rather than tried.
const MODES: [Isolation; 2] = [Isolation::Namespaces, Isolation::Fallback];

fn setup(isolation: Isolation) -> SandboxSetup {
    SandboxSetup {
        isolation,
        helper: Some(PathBuf::from(env!("CARGO_BIN_EXE_openturn"))),
    }
}

fn prepare(
    isolation: Isolation,
    policy: SandboxPolicy,
    cwd: &Path,
    roots: &[PathBuf],
    protected: &[PathBuf],
) -> PreparedSandbox {
    match PreparedSandbox::prepare(policy, cwd, roots, protected, &setup(isolation)) {
        Ok(prepared) => prepared,
        Err(error @ SandboxError::Unsupported { .. }) => panic!(
            "this machine is expected to enforce every policy in both modes (Landlock ABI >= 3, \
             seccomp, bwrap with user namespaces): {error}"
        ),
        Err(error) => panic!("{error}"),
    }
}

/// Runs `program args` in `cwd` under `sandbox`, bounded by a timeout.
async fn run_in(sandbox: &PreparedSandbox, cwd: &Path, program: &str, args: &[&str]) -> Output {
    let mut command = sandbox.command(program, args, cwd, std::env::vars_os());
    sandbox.install(&mut command);
    command.kill_on_drop(true);
    tokio::time::timeout(TIMEOUT, command.output())
        .await
        .unwrap_or_else(|_| panic!("{program} {args:?} did not finish"))
        .unwrap_or_else(|e| panic!("spawning {program} under the sandbox failed: {e}"))
}

async fn sh(sandbox: &PreparedSandbox, cwd: &Path, script: &str, arg: &str) -> Output {
    run_in(sandbox, cwd, "sh", &["-c", script, "sh", arg]).await
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Refused by Landlock or seccomp (EACCES, EPERM) or by a read-only mount (EROFS).
fn assert_denied(output: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success()
            && (stderr.contains("Permission denied")
                || stderr.contains("not permitted")
                || stderr.contains("Read-only file system")),
        "{what} should be refused with EACCES/EPERM/EROFS:\n{}",
        text(output)
    );
}

fn assert_ok(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} should work:\n{}",
        text(output)
    );
}

const WRITE: &str = "echo written > \"$1\"";

#[tokio::test]
async fn read_only_refuses_writes_but_reads_everything_and_writes_its_private_tmpdir() {
    for isolation in MODES {
        read_only_in(isolation).await;
    }
}

async fn read_only_in(isolation: Isolation) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = prepare(isolation, READ_ONLY, dir.path(), &[], &[]);
    let target = dir.path().join("file");

    let output = sh(&sandbox, dir.path(), WRITE, target.to_str().unwrap()).await;
    assert_denied(&output, "writing the cwd under read-only");
    assert!(!target.exists(), "the refused write left a file behind");

    let output = sh(
        &sandbox,
        dir.path(),
        "head -c 1 /etc/passwd && ls /etc >/dev/null",
        "",
    )
    .await;
    assert_ok(&output, "reading /etc under read-only");

    let script = "test \"$TMPDIR\" = \"$1\" && echo hi > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && echo gone > /dev/null";
    // In namespace mode the private temp dir is the command's own /tmp.
    let tmp = match sandbox.mode() {
        Some(IsolationMode::Fallback) => sandbox.private_tmp().unwrap().to_str().unwrap(),
        _ => "/tmp",
    }
    .to_string();
    let output = sh(&sandbox, dir.path(), script, &tmp).await;
    assert_ok(
        &output,
        "writing the private TMPDIR and /dev/null under read-only",
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hi\n");

    let shared = Path::new("/tmp").join(format!("openturn-sandbox-escape-{}", std::process::id()));
    let output = sh(&sandbox, dir.path(), WRITE, shared.to_str().unwrap()).await;
    if sandbox.mode() == Some(IsolationMode::Fallback) {
        assert_denied(&output, "writing the shared /tmp under read-only");
    }
    // In namespace mode the write lands in the command's private /tmp, never the shared one.
    assert!(
        !shared.exists(),
        "{isolation:?}: the shared /tmp was written"
    );
}

#[tokio::test]
async fn workspace_write_allows_the_cwd_and_roots_but_not_outside_git_or_protected_paths() {
    for isolation in MODES {
        workspace_write_in(isolation).await;
    }
}

async fn workspace_write_in(isolation: Isolation) {
    let workspace = tempfile::tempdir().unwrap();
    let outside = outside_tmp::outside_tmp_dir();
    let extra_root = tempfile::tempdir().unwrap();
    let cwd = workspace.path();
    std::fs::create_dir_all(cwd.join(".git/hooks")).unwrap();
    std::fs::write(cwd.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::create_dir_all(cwd.join("home")).unwrap();
    std::fs::write(cwd.join("README"), "old\n").unwrap();
    let sandbox = prepare(
        isolation,
        WORKSPACE,
        cwd,
        &[extra_root.path().to_path_buf()],
        &[cwd.join("home")],
    );

    let inside = cwd.join("src/new.txt");
    let output = sh(&sandbox, cwd, WRITE, inside.to_str().unwrap()).await;
    assert_ok(&output, "writing inside the cwd");
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "written\n");
    let output = sh(&sandbox, cwd, WRITE, cwd.join("README").to_str().unwrap()).await;
    assert_ok(&output, "rewriting an existing file at the top of the cwd");
    let extra = extra_root.path().join("f");
    assert_ok(
        &sh(&sandbox, cwd, WRITE, extra.to_str().unwrap()).await,
        "writing a writable root",
    );

    let target = outside.path().join("f");
    assert_denied(
        &sh(&sandbox, cwd, WRITE, target.to_str().unwrap()).await,
        "writing outside",
    );
    assert!(!target.exists());

    let config = cwd.join(".git/config");
    assert_denied(
        &sh(&sandbox, cwd, WRITE, config.to_str().unwrap()).await,
        "writing .git/config",
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[core]\n");
    let hook = cwd.join(".git/hooks/pre-commit");
    assert_denied(
        &sh(&sandbox, cwd, WRITE, hook.to_str().unwrap()).await,
        "planting a git hook",
    );
    assert!(!hook.exists());
    // A hard link would give .git/config a second, writable name; Landlock refuses links that
    // gain rights.
    let output = sh(&sandbox, cwd, "ln .git/config src/config-link", "").await;
    assert!(
        !output.status.success(),
        "hard-linking .git/config out:\n{}",
        text(&output)
    );
    assert!(!cwd.join("src/config-link").exists());
    // Refused by Landlock (fallback) or because `.git` is a mount point (EBUSY).
    let output = sh(&sandbox, cwd, "mv .git .git-moved", "").await;
    assert!(
        !output.status.success(),
        "renaming .git away:\n{}",
        text(&output)
    );
    assert!(cwd.join(".git/config").exists());
    let protected = cwd.join("home/state");
    assert_denied(
        &sh(&sandbox, cwd, WRITE, protected.to_str().unwrap()).await,
        "writing a protected path",
    );

    // The documented price of keeping .git read-only in the fallback: the directory holding it
    // cannot gain new entries itself (Landlock grants cannot exclude a subdirectory). Namespace
    // mode binds .git read-only over a writable root instead, so the root takes new entries.
    let top = cwd.join("top-level-new");
    let output = sh(&sandbox, cwd, WRITE, top.to_str().unwrap()).await;
    match isolation {
        Isolation::Fallback => assert_denied(&output, "a new file beside .git"),
        _ => assert_ok(&output, "a new file beside .git in namespace mode"),
    }
}

#[tokio::test]
async fn workspace_write_without_git_allows_new_files_at_the_top_of_the_cwd() {
    for isolation in MODES {
        let workspace = tempfile::tempdir().unwrap();
        let cwd = workspace.path();
        let sandbox = prepare(isolation, WORKSPACE, cwd, &[], &[]);
        let output = sh(
            &sandbox,
            cwd,
            "echo a > new && mkdir d && mv new d/ && rm d/new && rmdir d",
            "",
        )
        .await;
        assert_ok(
            &output,
            "creating, moving and removing files in a cwd without .git",
        );
    }
}

/// A python3 probe that connects to 127.0.0.1:PORT and prints "connected".
fn connect_script(port: u16) -> String {
    format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=5)\nprint('connected')\n"
    )
}

#[tokio::test]
async fn loopback_tcp_is_refused_unless_the_policy_allows_the_network() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let script = connect_script(port);

    for (isolation, policy) in MODES
        .into_iter()
        .flat_map(|isolation| [(isolation, READ_ONLY), (isolation, WORKSPACE)])
    {
        let sandbox = prepare(isolation, policy.clone(), dir.path(), &[], &[]);
        let output = run_in(&sandbox, dir.path(), "python3", &["-c", &script]).await;
        assert!(
            !output.status.success()
                && !String::from_utf8_lossy(&output.stdout).contains("connected"),
            "{policy} without network must refuse a loopback connect:\n{}",
            text(&output)
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("PermissionError"),
            "{}",
            text(&output)
        );
        let udp = "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n";
        let output = run_in(&sandbox, dir.path(), "python3", &["-c", udp]).await;
        assert!(
            !output.status.success(),
            "UDP under {policy}:\n{}",
            text(&output)
        );
        let unix = "import socket\nsocket.socketpair()\nprint('ok')\n";
        let output = run_in(&sandbox, dir.path(), "python3", &["-c", unix]).await;
        assert_ok(&output, "a UNIX socket pair without network");
    }

    for isolation in MODES {
        let sandbox = prepare(isolation, WORKSPACE_WITH_NETWORK, dir.path(), &[], &[]);
        let output = run_in(&sandbox, dir.path(), "python3", &["-c", &script]).await;
        assert_ok(&output, "a loopback connect with networkAccess");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "connected\n");
    }
}

#[tokio::test]
async fn ptrace_and_user_namespaces_are_refused_under_confinement() {
    let dir = tempfile::tempdir().unwrap();
    // PTRACE_TRACEME = 0; CLONE_NEWUSER = 0x10000000. Each prints its return value and errno.
    let script = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
        print(libc.ptrace(0, 0, None, None), ctypes.get_errno())\n\
        print(libc.unshare(0x10000000), ctypes.get_errno())\n";
    for (isolation, policy) in MODES
        .into_iter()
        .flat_map(|isolation| [(isolation, READ_ONLY), (isolation, WORKSPACE_WITH_NETWORK)])
    {
        let sandbox = prepare(isolation, policy.clone(), dir.path(), &[], &[]);
        let output = run_in(&sandbox, dir.path(), "python3", &["-c", script]).await;
        assert_ok(&output, "the probe itself");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "-1 1\n-1 1\n",
            "ptrace(PTRACE_TRACEME) and unshare(CLONE_NEWUSER) must fail with EPERM under {policy}"
        );
    }
}

#[tokio::test]
async fn full_access_and_external_sandbox_do_not_confine() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    for (index, policy) in [
        SandboxPolicy::DangerFullAccess,
        SandboxPolicy::ExternalSandbox,
    ]
    .into_iter()
    .enumerate()
    {
        let sandbox = prepare(Isolation::Auto, policy, dir.path(), &[], &[]);
        let target = outside.path().join(format!("f{index}"));
        let output = sh(&sandbox, dir.path(), WRITE, target.to_str().unwrap()).await;
        assert_ok(&output, "writing anywhere without confinement");
        assert!(target.exists());
    }
}

#[tokio::test]
async fn the_prepared_sandbox_can_be_reused_for_several_spawns() {
    for isolation in MODES {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = prepare(isolation, WORKSPACE, dir.path(), &[], &[]);
        for index in 0..3 {
            let target = dir.path().join(format!("f{index}"));
            assert_ok(
                &sh(&sandbox, dir.path(), WRITE, target.to_str().unwrap()).await,
                "a repeated spawn",
            );
        }
        // Outside every root, and outside /tmp so namespace mode cannot take it for its own.
        let outside = outside_tmp::outside_tmp_dir();
        let target = outside.path().join("f");
        assert_denied(
            &sh(&sandbox, dir.path(), WRITE, target.to_str().unwrap()).await,
            "writing outside on reuse",
        );
        assert!(!target.exists());
    }
}
