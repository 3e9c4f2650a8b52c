//! `openturn demo` runs the main job offline: a built-in loopback provider replays the shipped
//! transcripts, the real daemon is spawned, and a readable transcript is printed; it ends with
//! the next command to try, which runs offline too.

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
    // The first answer names openturn's version and the protocol's apart.
    let answer = stdout
        .lines()
        .find(|line| line.starts_with("← "))
        .unwrap_or_default();
    assert_eq!(
        answer,
        format!(
            "← openturn {} · protocol {}",
            env!("CARGO_PKG_VERSION"),
            openturn::protocol::PROTOCOL_VERSION
        )
    );
    // It ends with the next command to try, and that command runs offline as printed.
    let next = stdout.lines().last().unwrap_or_default().trim();
    assert_eq!(
        next, "openturn -c model_provider=demo exec \"give me the tour\"",
        "{stdout}"
    );
    let tour = Command::new(env!("CARGO_BIN_EXE_openturn"))
        .args(["-c", "model_provider=demo", "exec", "give me the tour"])
        .current_dir(home.path())
        .env("OPENTURN_HOME", home.path().join("next"))
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let answer = String::from_utf8_lossy(&tour.stdout);
    assert!(tour.status.success(), "{answer}");
    assert!(
        answer.starts_with("Done. Here is what happened:"),
        "{answer}"
    );
    std::fs::remove_dir_all(home.path().join("next")).unwrap();
    // The demo uses its own temporary home, never the user's.
    assert!(
        std::fs::read_dir(home.path())
            .map(|d| d.count())
            .unwrap_or(0)
            == 0
    );
}
