//! The daemon's check of how it can confine commands (it starts `bwrap` once) runs beside the
//! daemon, not before it serves: `initialize` is answered while the check still runs, and a
//! confined command waits for the check's answer — it runs as that answer says (here, in the
//! fallback mode) or is refused with its reason, never run before it is known.
//!
//! A `bwrap` first on `PATH` stands in for bubblewrap: it says it started (a file), blocks on a
//! FIFO the test writes to when it chooses, leaves a file saying it answered, then fails as
//! bubblewrap fails where user namespaces are not allowed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::ffi::CString;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::*;

/// What the stand-in says on stderr; the refusal quotes it.
const FAKE_FAILURE: &str = "fake bwrap: user namespaces are not allowed here";

struct HeldCheck {
    dir: tempfile::TempDir,
}

impl HeldCheck {
    /// A directory holding the stand-in `bwrap` and the FIFO that holds it.
    fn new() -> HeldCheck {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let fifo = CString::new(dir.path().join("release").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        // The check runs it with an empty environment: only absolute paths and builtins.
        let script = format!(
            "#!/bin/sh\n: > '{root}/started'\nread line < '{root}/release'\n\
             echo answered > '{root}/answered'\necho '{FAKE_FAILURE}' >&2\nexit 1\n",
            root = dir.path().display()
        );
        let bwrap = bin.join("bwrap");
        write_executable(&bwrap, &script);
        HeldCheck { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn search_path(&self) -> String {
        format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// Lets the check finish (the write waits for the stand-in to be reading).
    async fn release(&self) {
        let fifo = self.path("release");
        tokio::task::spawn_blocking(move || std::fs::write(fifo, "go\n").unwrap())
            .await
            .unwrap();
    }
}

impl Drop for HeldCheck {
    /// A test that failed before releasing the stand-in must not leave it blocked: a stand-in
    /// still reading gets its line (without one, opening the FIFO fails at once and is fine).
    fn drop(&mut self) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(mut fifo) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.path("release"))
        {
            let _ = fifo.write_all(b"go\n");
        }
    }
}

/// A daemon initialized while its sandbox check is held, and what it needs kept alive.
struct Held {
    daemon: Daemon,
    initialized: Value,
    _provider: MockProvider,
    _home: tempfile::TempDir,
}

/// A daemon whose sandbox check is held by the stand-in, initialized while it is held.
async fn daemon_while_the_check_is_held(check: &HeldCheck, isolation: &str) -> Held {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.push(format!("sandbox_isolation=\"{isolation}\""));
    let search_path = check.search_path();
    let mut daemon =
        Daemon::spawn_with_env(home.path(), &overrides, &[("PATH", search_path.as_str())]);
    let started = check.path("started");
    assert!(
        poll_until(|| started.exists()).await,
        "the check never started"
    );
    // The check is held: without running it beside the daemon, this is never answered.
    let initialized = daemon.initialize().await;
    assert!(!check.path("answered").exists());
    Held {
        daemon,
        initialized,
        _provider: provider,
        _home: home,
    }
}

fn read_only_cat(file: &Path) -> Value {
    json!({"command": ["cat", file.display().to_string()],
           "sandboxPolicy": {"type": "readOnly"}})
}

#[tokio::test]
async fn initialize_is_answered_during_the_check_and_a_confined_command_runs_after_its_answer() {
    let check = HeldCheck::new();
    let held = daemon_while_the_check_is_held(&check, "auto").await;
    assert!(
        held.initialized.get("result").is_some(),
        "{}",
        held.initialized
    );
    let mut daemon = held.daemon;
    // Sent while the check is held; it can only print the file the check leaves as it answers.
    let id = daemon
        .send_request("command/exec", read_only_cat(&check.path("answered")))
        .await;
    check.release().await;
    let response = daemon.response_to(id).await;
    assert_eq!(response["result"]["exitCode"], 0, "{response}");
    assert_eq!(response["result"]["stdout"], "answered\n");
    // The answer: no namespaces, so confined commands run in the fallback mode.
    let config = daemon.ok("config/read", json!({})).await;
    assert_eq!(config["config"]["sandbox_isolation"], "fallback");
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn a_required_isolation_the_check_rules_out_is_refused_with_its_reason() {
    let check = HeldCheck::new();
    let held = daemon_while_the_check_is_held(&check, "namespaces").await;
    let mut daemon = held.daemon;
    let id = daemon
        .send_request("command/exec", read_only_cat(&check.path("answered")))
        .await;
    check.release().await;
    let response = daemon.response_to(id).await;
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(message.contains(FAKE_FAILURE), "{message}");
    assert!(
        message.contains("will not run a command unconfined"),
        "{message}"
    );
    daemon.exit_cleanly().await;
}
