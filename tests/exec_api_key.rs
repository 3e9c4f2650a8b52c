//! The TypeScript SDK passes its `apiKey` as `CODEX_API_KEY` and its `baseUrl` as
//! `-c openai_base_url=…`: exec authenticates the default (OpenAI) provider with that key, at
//! that URL, and the key never reaches stdout or stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use exec_support::*;
use support::*;
use turn_support::*;

#[tokio::test]
async fn codex_api_key_and_openai_base_url_drive_the_default_provider() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new([message_reply("r1", "m", &["ok"])]))
        .await
        .unwrap();
    let mut command = tokio::process::Command::new(openturn_bin());
    command
        .args(["exec", "--experimental-json", "--config"])
        .arg(format!("openai_base_url=\"{}\"", provider.base_url()))
        .env("OPENTURN_HOME", home.path())
        .env("CODEX_API_KEY", "sk-from-the-sdk")
        .env("OPENAI_API_KEY", "sk-not-this-one")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let run = run_exec(command, "hello").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    run.events();
    let requests = provider.wait_for_requests(1, TIMEOUT).await;
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-from-the-sdk")
    );
    assert!(!run.stdout.contains("sk-from") && !run.stderr.contains("sk-from"));
}
