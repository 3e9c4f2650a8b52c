//! What launchers written for the reference CLI rely on:
//! - `--enable FEATURE` / `--disable FEATURE`, before or after the subcommand, set
//!   `features.<name>` (visible in `config/read`); an unknown name is a warning, not a failure;
//! - `initialize` reports the reference protocol version (0.171.0) as the first `x.y.z` of
//!   `userAgent` and as `serverInfo.version`, and openturn's own version in `openturnVersion`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Stdio;

use serde_json::{json, Value};
use support::*;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

#[tokio::test]
async fn feature_flags_are_accepted_before_and_after_the_subcommand() {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(openturn_bin());
    command
        .args(["--enable", "goals", "--disable", "fast_mode", "app-server"])
        .args(["--enable", "no_such_feature_xyz", "--disable", "goals"])
        .env("OPENTURN_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut daemon = Daemon::from_command(command);
    daemon.initialize().await;
    let config = daemon.ok("config/read", json!({})).await;
    // Enables apply before disables, so `--disable goals` wins over `--enable goals`.
    assert_eq!(
        config["config"]["features"],
        json!({"goals": false, "fast_mode": false, "no_such_feature_xyz": true}),
        "{config}"
    );
    daemon.close_stdin();
    let _ = tokio::time::timeout(TIMEOUT, daemon.child.wait()).await;
    let stderr = daemon.stderr().join("\n");
    assert!(
        stderr.contains("unknown feature `no_such_feature_xyz`"),
        "{stderr}"
    );
    assert!(!stderr.contains("`goals`"), "known features warn: {stderr}");
}

#[tokio::test]
async fn an_unknown_feature_does_not_stop_other_subcommands() {
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(openturn_bin())
        .args(["schema", "--out"])
        .arg(out.path())
        .args(["--enable", "not_a_feature"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr).await;
    }
    let status = tokio::time::timeout(TIMEOUT, child.wait())
        .await
        .expect("openturn schema hung")
        .unwrap();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("not_a_feature"), "{stderr}");
}

/// The first `x.y.z` in a string, as clients that gate on the version read it.
fn first_version(text: &str) -> Option<(u32, u32, u32)> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|part| {
            let mut numbers = part.split('.').map(|n| n.parse::<u32>().ok());
            match (numbers.next(), numbers.next(), numbers.next()) {
                (Some(Some(a)), Some(Some(b)), Some(Some(c))) => Some((a, b, c)),
                _ => None,
            }
        })
        .next()
}

#[tokio::test]
async fn initialize_reports_the_reference_version_and_openturns_own() {
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &[]);
    let response = daemon
        .request(
            "initialize",
            json!({"clientInfo": {"name": "gatekeeper", "version": "9.9.9"}}),
        )
        .await;
    let result = &response["result"];
    let user_agent = result["userAgent"].as_str().unwrap_or_default();
    assert!(
        user_agent.starts_with("gatekeeper/0.171.0 "),
        "{user_agent}"
    );
    assert_eq!(first_version(user_agent), Some((0, 171, 0)));
    assert!(first_version(user_agent) >= Some((0, 153, 0)));
    assert_eq!(
        result["serverInfo"],
        json!({"name": "openturn", "version": "0.171.0"})
    );
    assert_eq!(
        result["openturnVersion"],
        Value::from(env!("CARGO_PKG_VERSION"))
    );
}
