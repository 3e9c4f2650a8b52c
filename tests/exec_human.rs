//! `openturn exec` without `--json` is for a person: stdout carries only the answer (streamed),
//! reasoning and commands go to stderr (no ANSI codes when stderr is not a terminal), and a
//! one-line summary with tokens and time ends the run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use exec_support::*;
use serde_json::json;
use support::*;
use turn_support::*;

#[tokio::test]
async fn the_answer_goes_to_stdout_and_progress_and_a_summary_to_stderr() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .reasoning("rs_1", &[&["Consider", "ing"]])
            .exec_call(
                "fc_1",
                "call_1",
                json!({"cmd": "echo from-tool", "login": false}),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["The ", "answer."]),
    ]))
    .await
    .unwrap();
    let run = exec(
        home.path(),
        &provider,
        &["-c", "approval_policy=\"never\"", "question"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(run.stdout, "The answer.\n");
    let stderr = &run.stderr;
    assert!(!stderr.contains('\x1b'), "ANSI codes on a pipe: {stderr:?}");
    assert!(stderr.contains("thinking: Considering"), "{stderr}");
    assert!(
        stderr.contains("$ ") && stderr.contains("echo from-tool"),
        "{stderr}"
    );
    assert!(stderr.contains("  from-tool\n"), "{stderr}");
    assert!(stderr.contains("(completed, exit 0)"), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("done · tokens: 20 in (0 cached), 10 out"),
        "{last}"
    );
    assert!(last.ends_with('s'), "{last}");
}

#[tokio::test]
async fn a_failed_turn_says_why_on_stderr_and_exits_1() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new([ResponseBuilder::new("r1")
        .failed("server_error", "the model broke")
        .build()]))
    .await
    .unwrap();
    let run = exec(home.path(), &provider, &["hi"], "").await;
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(run.stdout, "");
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("failed: ") && last.contains("the model broke"),
        "{last}"
    );
}

#[tokio::test]
async fn each_retry_is_one_line_and_the_final_error_is_said_once() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new([
        mock_provider::error_status(503, "server_busy", "the upstream is busy"),
        mock_provider::error_status(503, "server_busy", "the upstream is busy"),
        mock_provider::error_status(503, "server_busy", "the upstream is busy"),
    ]))
    .await
    .unwrap();
    let run = exec(
        home.path(),
        &provider,
        &["-c", "model_providers.mock.request_max_retries=2", "hi"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(1), "{run:#?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    let retries: Vec<&&str> = lines
        .iter()
        .filter(|line| line.starts_with("Retrying the request ("))
        .collect();
    assert_eq!(retries.len(), 2, "{lines:#?}");
    assert!(
        retries[0].starts_with("Retrying the request (1/2) in "),
        "{lines:#?}"
    );
    assert!(
        retries[1].starts_with("Retrying the request (2/2) in "),
        "{lines:#?}"
    );
    assert!(
        retries
            .iter()
            .all(|line| line.contains("the upstream is busy")),
        "each retry says why: {lines:#?}"
    );
    assert!(
        !run.stderr.contains("WARN") && !run.stderr.contains("INFO"),
        "no log lines: {lines:#?}"
    );
    let mentions = lines
        .iter()
        .filter(|line| !line.starts_with("Retrying") && line.contains("the upstream is busy"))
        .count();
    assert_eq!(mentions, 1, "the final error is said once: {lines:#?}");
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("failed: ") && last.contains("HTTP 503"),
        "{lines:#?}"
    );
}

/// On a terminal the progress lines are dimmed (ANSI dim), the answer is not. `script` (util-linux)
/// gives the run a pseudo-terminal; without it the test is skipped.
#[tokio::test]
async fn progress_is_dimmed_only_on_a_terminal() {
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("skipping: needs `script` (util-linux) for a pseudo-terminal");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new([ResponseBuilder::new("r1")
        .created()
        .reasoning("rs_1", &[&["Pondering"]])
        .text_message("msg_f", &["Plain answer."])
        .completed(Usage::small(), None)
        .build()]))
    .await
    .unwrap();
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut words = vec![
        quote(&openturn_bin().display().to_string()),
        "exec".to_string(),
    ];
    for o in mock_overrides(&provider) {
        words.push("-c".to_string());
        words.push(quote(&o));
    }
    words.push(quote("question"));
    let mut command = tokio::process::Command::new("script");
    command
        .args(["-qec", &words.join(" "), "/dev/null"])
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let run = run_exec(command, "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    // Through the pseudo-terminal stdout and stderr arrive together.
    let screen = &run.stdout;
    assert!(screen.contains("\x1b[2mPondering\x1b[0m"), "{screen:?}");
    assert!(screen.contains("Plain answer."), "{screen:?}");
    assert!(
        !screen.contains("\x1b[2mPlain answer."),
        "the answer is not dimmed: {screen:?}"
    );
}
