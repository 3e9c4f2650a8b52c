//! `clients/python` (the asyncio client package) passes its pytest suite against the real
//! binary: every scenario of `client_packages` runs through the package and its scripted
//! replies are all consumed, and the requests show what the client sent.
//!
//! The Python examples of the READMEs (this package's, and the main README's for it and for the
//! official Python SDK) run as pasted into a file, offline against the `demo` provider, and exit
//! non-zero with the reason when the turn fails.
//!
//! `OPENTURN_CLIENTS_PYTHON` names a python with the package and its pinned test dependencies
//! installed (scripts/test creates `.venv-clients`); `OPENTURN_SDK_PYTHON` one with the official
//! SDK (`.venv-sdk`). Without them the tests are skipped locally and fail under `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_packages;
mod support;
mod turn_support;

use std::time::Duration;

use client_packages::readme_examples::{code_blocks, example_file_shown_in_readme, Example};
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

/// The runnable Python blocks of `readme` (those that run their `main`) that import `module`.
fn python_examples(readme: &str, module: &str) -> Vec<(String, String)> {
    code_blocks(readme, "python")
        .into_iter()
        .enumerate()
        .filter(|(_, block)| block.contains(&format!("from {module} import")))
        .map(|(index, block)| (format!("{readme}, python block {}", index + 1), block))
        .collect()
}

#[tokio::test]
async fn the_readme_examples_of_the_python_client_run_as_written() {
    let Some(python) = tool_from_env(
        "OPENTURN_CLIENTS_PYTHON",
        "a python with ./clients/python[test] installed",
    ) else {
        return;
    };
    let hello = example_file_shown_in_readme("clients/python", "hello.py", "python");
    let example = Example {
        origin: "clients/python/examples/hello.py".to_string(),
        source: std::fs::read_to_string(&hello).unwrap(),
        file_name: "hello.py",
        in_place: Some(hello),
        program: &python,
        node_modules: Vec::new(),
    };
    example
        .check("- the command ran and printed: hello from the openturn demo")
        .await;
    let examples = python_examples("README.md", "openturn_client");
    assert_eq!(
        examples.len(),
        1,
        "the main README's example of the package"
    );
    for (origin, source) in examples {
        let example = Example {
            origin,
            source,
            file_name: "hello.py",
            in_place: None,
            program: &python,
            node_modules: Vec::new(),
        };
        example.check("built-in demo provider").await;
    }
}

#[tokio::test]
async fn the_readme_example_of_the_official_python_sdk_runs_as_written() {
    let Some(python) = tool_from_env(
        "OPENTURN_SDK_PYTHON",
        "a python with openai-codex installed",
    ) else {
        return;
    };
    let examples = python_examples("README.md", "openai_codex");
    assert_eq!(examples.len(), 1, "the main README's example of the SDK");
    for (origin, source) in examples {
        let example = Example {
            origin,
            source,
            file_name: "sdk_example.py",
            in_place: None,
            program: &python,
            node_modules: Vec::new(),
        };
        example.check("built-in demo provider").await;
    }
}
