//! A new thread whose only turn failed before any request left the process (no API key) leaves
//! no rollout and no `thread/list` entry once the daemon stops; a thread whose request reached
//! the provider, even one that failed, and a thread whose later turn got through, keep theirs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;

use serde_json::json;
use support::*;

/// The mock overrides with a key variable nobody sets: every turn fails before it sends.
fn without_key(provider: &MockProvider) -> Vec<String> {
    let mut overrides = mock_overrides(provider);
    overrides.push("model_providers.mock.env_key=\"OPENTURN_UNSET_TEST_KEY\"".to_string());
    // Takes the key `account/login/start` stores, as OpenAI's own provider does.
    overrides.push("model_providers.mock.requires_openai_auth=true".to_string());
    overrides
}

/// The ids `thread/list` shows in `home`, from a fresh daemon.
async fn listed(home: &std::path::Path, provider: &MockProvider) -> Vec<String> {
    let mut daemon = Daemon::spawn(home, &mock_overrides(provider));
    daemon.initialize().await;
    let list = daemon.ok("thread/list", json!({})).await;
    daemon.exit_cleanly().await;
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| thread["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_thread_whose_turn_failed_before_sending_leaves_nothing_behind() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn_with_env(home.path(), &without_key(&provider), &[]);
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let turn = text_turn(&mut daemon, &thread_id, "hello").await;
    let end = turn.last().unwrap();
    assert_eq!(end["params"]["turn"]["status"], "failed", "{end}");
    // While loaded it is an ordinary thread.
    assert_eq!(rollout_files(home.path()).len(), 1);
    daemon.exit_cleanly().await;
    assert_eq!(provider.requests().len(), 0);
    assert_eq!(rollout_files(home.path()), Vec::<std::path::PathBuf>::new());
    assert_eq!(listed(home.path(), &provider).await, Vec::<String>::new());
}

#[tokio::test]
async fn exec_without_a_key_leaves_nothing_behind() {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = exec_support::exec_command(home.path(), &provider, &["hello"]);
    command.env_remove("OPENTURN_TEST_KEY");
    let run = exec_support::run_exec(command, "").await;
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("OPENTURN_TEST_KEY"), "{}", run.stderr);
    assert!(!run.stderr.contains("WARN"), "{}", run.stderr);
    assert_eq!(rollout_files(home.path()), Vec::<std::path::PathBuf>::new());
}

#[tokio::test]
async fn threads_that_reached_the_provider_keep_their_rollout() {
    let provider = MockProvider::start(Script::new([
        mock_provider::error_status(400, "bad_request", "the provider refused"),
        text_reply(1, "answered"),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    // Its only turn failed, but the request reached the provider.
    let refused = daemon.start_thread(json!({})).await;
    let turn = text_turn(&mut daemon, &refused, "hello").await;
    assert_eq!(turn.last().unwrap()["params"]["turn"]["status"], "failed");
    daemon.exit_cleanly().await;
    // Its first turn failed unsent; the key was there for the second.
    let mut daemon = Daemon::spawn(home.path(), &without_key(&provider));
    daemon.initialize().await;
    let recovered = daemon.start_thread(json!({})).await;
    let turn = text_turn(&mut daemon, &recovered, "hello").await;
    assert_eq!(turn.last().unwrap()["params"]["turn"]["status"], "failed");
    daemon
        .ok(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": "sk-stored-key"}),
        )
        .await;
    let turn = text_turn(&mut daemon, &recovered, "again").await;
    assert_eq!(
        turn.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    daemon.exit_cleanly().await;
    let mut ids = listed(home.path(), &provider).await;
    ids.sort();
    let mut expected = vec![refused, recovered];
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(rollout_files(home.path()).len(), 2);
}
