//! `clients/typescript` (the Node.js client package) passes its `node --test` suite against
//! the real binary: every scenario of `client_packages` runs through the package and its
//! scripted replies are all consumed, and the requests show what the client sent.
//!
//! The JavaScript examples of the READMEs (this package's, and the main README's for it and for
//! the official TypeScript SDK) run as pasted into a file, offline against the `demo` provider,
//! and exit non-zero with the reason when the turn fails.
//!
//! `OPENTURN_CLIENTS_NODE` names the node binary to run the suite with, once
//! `clients/typescript/node_modules` holds the pinned dev dependencies (scripts/test installs
//! them with `npm ci`). Without it the test is skipped locally and fails under `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_packages;
mod support;
mod turn_support;

use std::time::Duration;

use client_packages::readme_examples::{code_blocks, example_file_shown_in_readme, Example};
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

/// The JavaScript blocks of `readme` that import `package` and run to their end (they close
/// what they started or print the final answer).
fn js_examples(readme: &str, package: &str, ends_with: &str) -> Vec<(String, String)> {
    code_blocks(readme, "js")
        .into_iter()
        .enumerate()
        .filter(|(_, block)| {
            block.contains(&format!("from \"{package}\"")) && block.contains(ends_with)
        })
        .map(|(index, block)| (format!("{readme}, js block {}", index + 1), block))
        .collect()
}

#[tokio::test]
async fn the_readme_examples_of_the_typescript_client_run_as_written() {
    let Some(node) = tool_from_env(
        "OPENTURN_CLIENTS_NODE",
        "node, with clients/typescript's dev dependencies installed",
    ) else {
        return;
    };
    // Run where it lies, it finds the package by its own name (no install needed).
    let hello = example_file_shown_in_readme("clients/typescript", "hello.mjs", "js");
    let example = Example {
        origin: "clients/typescript/examples/hello.mjs".to_string(),
        source: std::fs::read_to_string(&hello).unwrap(),
        file_name: "hello.mjs",
        in_place: Some(hello),
        program: &node,
        node_modules: Vec::new(),
    };
    example
        .check("- the command ran and printed: hello from the openturn demo")
        .await;
    let package = package_dir("clients/typescript");
    let examples = js_examples("README.md", "openturn-client", "await client.close()");
    assert_eq!(
        examples.len(),
        1,
        "the main README's example of the package"
    );
    for (origin, source) in examples {
        let example = Example {
            origin,
            source,
            file_name: "example.mjs",
            in_place: None,
            program: &node,
            node_modules: vec![("openturn-client", package.clone())],
        };
        example.check("built-in demo provider").await;
    }
}

#[tokio::test]
async fn the_readme_example_of_the_official_typescript_sdk_runs_as_written() {
    let Some(node) = tool_from_env(
        "OPENTURN_CLIENTS_NODE",
        "node, with clients/typescript's dev dependencies installed",
    ) else {
        return;
    };
    let sdk = package_dir("tests/ts_sdk/node_modules/@openai/codex-sdk");
    if !sdk.join("package.json").exists() {
        assert!(
            std::env::var("CI").map(|v| v != "true").unwrap_or(true),
            "CI=true but tests/ts_sdk/node_modules is missing: scripts/test must install it"
        );
        eprintln!("skipping: needs `npm ci` in tests/ts_sdk (scripts/test does it)");
        return;
    }
    let examples = js_examples(
        "README.md",
        "@openai/codex-sdk",
        "console.log(turn.finalResponse)",
    );
    assert_eq!(examples.len(), 1, "the main README's example of the SDK");
    for (origin, source) in examples {
        let example = Example {
            origin,
            source,
            file_name: "sdk_example.mjs",
            in_place: None,
            program: &node,
            node_modules: vec![("@openai/codex-sdk", sdk.clone())],
        };
        example.check("built-in demo provider").await;
    }
}
