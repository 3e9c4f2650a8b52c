//! What a newcomer finds at the command line: `--help` names openturn's home, its config file
//! and the key variables, and `openturn completions <shell>` prints a completion script for
//! each shell clap knows.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

use std::process::{Command, Output};

fn openturn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_openturn"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn help_names_the_home_the_config_file_and_the_key_variables() {
    let output = openturn(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "OPENTURN_HOME",
        "~/.openturn",
        "$OPENTURN_HOME/config.toml",
        "OPENAI_API_KEY",
        "env_key",
        "CODEX_API_KEY",
        "RUST_LOG",
        "completions",
        "openturn -c model_provider=demo exec",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}

#[test]
fn completions_are_printed_for_every_shell() {
    for (shell, marker) in [
        ("bash", "_openturn()"),
        ("zsh", "#compdef openturn"),
        ("fish", "complete -c openturn"),
        ("elvish", "openturn"),
        ("powershell", "openturn"),
    ] {
        let output = openturn(&["completions", shell]);
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{shell}: {output:?}");
        assert!(script.contains(marker), "{shell}:\n{script}");
        assert!(
            script.contains("app-server"),
            "{shell} lacks the subcommands"
        );
    }
    let output = openturn(&["completions", "tcsh"]);
    assert!(!output.status.success());
}
