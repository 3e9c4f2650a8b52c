//! What a command's environment holds and what the user is told about its sandbox, through the
//! real daemon:
//!
//! - `env` in a model's command or a `command/exec` shows no provider key (the mock provider's
//!   `env_key`, `OPENAI_API_KEY`), neither in the model's input nor in the rollout;
//! - `shell_environment_policy` (`inherit`, `set`, `include_only`, `exclude`) shapes the
//!   environment, and a key named exactly by `include_only` is passed;
//! - in the fallback mode the thread is warned once, naming what the mode cannot contain; in
//!   namespace mode it is not.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The mock provider's key (`OPENTURN_TEST_KEY`, set by `Daemon::spawn`).
const KEY: &str = "sk-test-secret-key";

fn env_turn(calls: usize) -> Script {
    let calls = |mut response: ResponseBuilder| {
        for n in 0..calls {
            response = response.exec_call(
                &format!("fc_{n}"),
                &format!("call_{n}"),
                json!({"cmd": "env; echo done", "login": false}),
            );
        }
        response
    };
    Script::new([
        ResponseBuilder::new("r1")
            .created()
            .with(calls)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["after"]),
    ])
}

#[tokio::test]
async fn env_in_a_model_command_shows_no_provider_key_to_the_model_or_the_rollout() {
    for sandbox in ["read-only", "danger-full-access"] {
        let workdir = tempfile::tempdir().unwrap();
        let params = json!({"approvalPolicy": "never", "sandbox": sandbox,
            "cwd": workdir.path().display().to_string()});
        let mut s = session(env_turn(1), &[], params).await;
        let all = s.run_turn("show the environment").await;
        single_turn_end(&all, "completed");
        let bodies = s.bodies(2).await;
        let outputs = call_outputs(&bodies[1]);
        assert_eq!(outputs.len(), 1);
        // The command ran and printed its environment, without the key.
        assert!(
            outputs[0].1.contains("PATH="),
            "{sandbox}: {}",
            outputs[0].1
        );
        assert!(outputs[0].1.contains("done"), "{}", outputs[0].1);
        assert!(!outputs[0].1.contains(KEY), "{sandbox}: {}", outputs[0].1);
        assert!(
            !outputs[0].1.contains("OPENTURN_TEST_KEY"),
            "{}",
            outputs[0].1
        );
        let rollout: Vec<String> = s.rollout().iter().map(Value::to_string).collect();
        assert!(rollout.iter().any(|line| line.contains("PATH=")));
        assert!(!rollout.iter().any(|line| line.contains(KEY)), "{sandbox}");
        assert!(
            !all.iter().any(|m| m.to_string().contains(KEY)),
            "{sandbox}"
        );
    }
}

async fn exec_env(daemon: &mut Daemon, policy: Value) -> String {
    let result = daemon
        .ok(
            "command/exec",
            json!({"command": ["env"], "sandboxPolicy": policy}),
        )
        .await;
    assert_eq!(result["exitCode"], 0, "{result}");
    result["stdout"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn command_exec_gets_no_provider_key_by_default_and_the_policy_shapes_the_rest() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("OPENTURN_TEST_KEY", KEY),
        ("OPENAI_API_KEY", "sk-openai-secret"),
        ("OPENTURN_VISIBLE", "yes"),
        ("GITHUB_TOKEN", "gh-token"),
    ];
    let mut daemon = Daemon::spawn_with_env(home.path(), &mock_overrides(&provider), &env);
    daemon.initialize().await;
    for policy in [
        json!({"type": "readOnly"}),
        json!({"type": "dangerFullAccess"}),
    ] {
        let shown = exec_env(&mut daemon, policy).await;
        assert!(shown.contains("OPENTURN_VISIBLE=yes"), "{shown}");
        // Not a key openturn uses, and the default excludes are off, as in the reference.
        assert!(shown.contains("GITHUB_TOKEN=gh-token"), "{shown}");
        assert!(!shown.contains(KEY), "{shown}");
        assert!(!shown.contains("sk-openai-secret"), "{shown}");
    }
    daemon.exit_cleanly().await;

    let mut overrides = mock_overrides(&provider);
    overrides.extend([
        "shell_environment_policy.set.GREETING=\"hi\"".to_string(),
        "shell_environment_policy.exclude=[\"github_*\"]".to_string(),
        "shell_environment_policy.include_only=[\"PATH\", \"GREETING\", \"OPENTURN_TEST_KEY\", \"GITHUB_*\"]"
            .to_string(),
    ]);
    let mut daemon = Daemon::spawn_with_env(home.path(), &overrides, &env);
    daemon.initialize().await;
    let shown = exec_env(&mut daemon, json!({"type": "dangerFullAccess"})).await;
    let mut names: Vec<&str> = shown
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        // The supervisor's own marker, which finds the command's processes (not the policy's).
        .filter(|name| *name != "OPENTURN_COMMAND_ID")
        .collect();
    names.sort_unstable();
    // GITHUB_TOKEN fell to `exclude` (matched without case); the provider key is named exactly
    // by `include_only`, so it passes.
    assert_eq!(names, ["GREETING", "OPENTURN_TEST_KEY", "PATH"], "{shown}");
    assert!(shown.contains("GREETING=hi"));
    daemon.exit_cleanly().await;

    let mut overrides = mock_overrides(&provider);
    overrides.push("shell_environment_policy.ignore_default_excludes=false".to_string());
    let mut daemon = Daemon::spawn_with_env(home.path(), &overrides, &env);
    daemon.initialize().await;
    let shown = exec_env(&mut daemon, json!({"type": "readOnly"})).await;
    assert!(shown.contains("OPENTURN_VISIBLE=yes"), "{shown}");
    assert!(!shown.contains("GITHUB_TOKEN"), "*TOKEN*: {shown}");
    daemon.exit_cleanly().await;
}

fn warnings_of(all: &[Value]) -> Vec<String> {
    params_of(all, "warning")
        .iter()
        .map(|params| params["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn the_fallback_warns_once_naming_what_it_cannot_contain_and_namespaces_do_not_warn() {
    for (isolation, warned) in [("fallback", true), ("namespaces", false)] {
        let workdir = tempfile::tempdir().unwrap();
        let params = json!({"approvalPolicy": "never", "sandbox": "workspace-write",
            "cwd": workdir.path().display().to_string()});
        let flag = format!("sandbox_isolation={isolation}");
        let mut s = session(env_turn(2), &[&flag], params).await;
        let all = s.run_turn("twice").await;
        single_turn_end(&all, "completed");
        let completed = items_of(&all, "item/completed", "commandExecution");
        assert!(completed.iter().all(|item| item["status"] == "completed"));
        let warnings = warnings_of(&all);
        if !warned {
            assert!(warnings.is_empty(), "{warnings:?}");
            continue;
        }
        assert_eq!(warnings.len(), 1, "once per thread: {warnings:?}");
        let warning = &warnings[0];
        for named in [
            "fallback mode",
            "sandbox_isolation",
            "permission bits",
            "repository root",
            "no size bound",
            "other commands' temp files",
        ] {
            assert!(warning.contains(named), "{named}: {warning}");
        }
    }
}
