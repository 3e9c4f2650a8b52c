//! `clients/typescript` (the Node.js client package) passes its `node --test` suite against
//! the real binary: every scenario of `client_packages` runs through the package and its
//! scripted replies are all consumed, and the requests show what the client sent.
//!
//! `OPENTURN_CLIENTS_NODE` names the node binary to run the suite with, once
//! `clients/typescript/node_modules` holds the pinned dev dependencies (scripts/test installs
//! them with `npm ci`). Without it the test is skipped locally and fails under `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_packages;
mod support;
mod turn_support;

use std::time::Duration;

use client_packages::*;

#[tokio::test]
async fn the_typescript_client_package_passes_its_suite_against_openturn() {
    let Some(node) = tool_from_env(
        "OPENTURN_CLIENTS_NODE",
        "node, with clients/typescript's dev dependencies installed",
    ) else {
        return;
    };
    let package = package_dir("clients/typescript");
    let mut files: Vec<String> = std::fs::read_dir(package.join("test"))
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".test.js"))
        .map(|name| format!("test/{name}"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "test files found: {files:?}");
    let scenarios = start_scenarios().await;
    let mut command = std::process::Command::new(node);
    command
        .arg("--test")
        .arg("--test-reporter=spec")
        .args(&files)
        .current_dir(&package);
    let output = run_suite(command, &scenarios, Duration::from_secs(600)).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("skipped 0") && stdout.contains("fail 0"),
        "no test of the suite may skip or fail when run from here:\n{stdout}"
    );
    check_scenarios(&scenarios);
}
