//! `openturn demo` runs the main job offline: a built-in loopback provider replays the shipped
//! transcripts, the real daemon is spawned, and a readable transcript is printed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

use std::process::Command;

#[test]
fn the_offline_demo_streams_a_scripted_session_and_exits_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_openturn"))
        .arg("demo")
        .env("OPENTURN_HOME", home.path())
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("assistant › Hello! I am openturn running offline"),
        "{stdout}"
    );
    assert!(
        stdout.contains("reasoning › **Reading the question**"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("← turn completed").count(), 3, "{stdout}");
    // The third turn runs the shell tool for real and feeds its output back to the model. The
    // transcript asks for a plain (non-login) shell: a login shell's profile can take seconds.
    assert!(
        stdout.contains("$ /bin/bash -c 'echo hello from a tool'"),
        "{stdout}"
    );
    assert!(stdout.contains("⏎ completed (exit 0)"), "{stdout}");
    assert!(stdout.contains("The command ran and printed"), "{stdout}");
    // The demo uses its own temporary home, never the user's.
    assert!(
        std::fs::read_dir(home.path())
            .map(|d| d.count())
            .unwrap_or(0)
            == 0
    );
}
