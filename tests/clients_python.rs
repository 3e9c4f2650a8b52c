//! `clients/python` (the asyncio client package) passes its pytest suite against the real
//! binary: every scenario of `client_packages` runs through the package and its scripted
//! replies are all consumed, and the requests show what the client sent.
//!
//! `OPENTURN_CLIENTS_PYTHON` names a python with the package and its pinned test dependencies
//! installed (scripts/test creates `.venv-clients`). Without it the test is skipped locally and
//! fails under `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_packages;
mod support;
mod turn_support;

use std::time::Duration;

use client_packages::*;

#[tokio::test]
async fn the_python_client_package_passes_its_suite_against_openturn() {
    let Some(python) = tool_from_env(
        "OPENTURN_CLIENTS_PYTHON",
        "a python with ./clients/python[test] installed",
    ) else {
        return;
    };
    let scenarios = start_scenarios().await;
    let mut command = std::process::Command::new(python);
    command
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(package_dir("clients/python"));
    let output = run_suite(command, &scenarios, Duration::from_secs(600)).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !stdout.contains("skipped"),
        "no test of the suite may skip when run from here:\n{stdout}"
    );
    check_scenarios(&scenarios);
}
