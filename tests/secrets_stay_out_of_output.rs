//! The API key and the `Authorization` header value never leave the request to the provider:
//! with `RUST_LOG=trace`, they appear in no stderr log line, no rollout file and no message on
//! stdout — on a successful turn, on a 401 from the provider, and on a provider that cuts the
//! stream. The provider's recorded request proves the key was really sent, so the greps below
//! search for something the daemon held.
//!
//! A key passed in the URL (`query_params = { api-key = "…" }`, as Azure allows) is as secret: a
//! provider that cannot be reached fails the turn with an error naming the URL without its query,
//! over HTTP and over the WebSocket transport alike.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::json;
use support::*;

const API_KEY: &str = "sk-openturn-canary-9f27c4e1d8b3a6q5";
/// A middle slice of the key: a partially masked key must not reveal it either.
const KEY_MIDDLE: &str = "canary-9f27c4e1";

fn assert_no_secret(place: &str, text: &str) {
    for needle in [API_KEY, KEY_MIDDLE, &format!("Bearer {API_KEY}")] {
        if let Some(at) = text.find(needle) {
            let start = at.saturating_sub(200);
            let end = (at + needle.len() + 50).min(text.len());
            panic!(
                "{place} contains a secret: …{}…",
                text.get(start..end).unwrap_or("<non-UTF-8 boundary>")
            );
        }
    }
}

#[tokio::test]
async fn the_api_key_and_auth_header_appear_in_no_log_rollout_or_notification() {
    let cut_reply = mock_provider::simple_text_response("resp_3", "msg_3", "never finished", 4)
        .with_fault(60, mock_provider::Fault::Cut);
    let provider = MockProvider::start(Script::new([
        Reply::Sse(mock_provider::simple_text_response(
            "resp_1",
            "msg_1",
            "Hello with a secret key",
            3,
        )),
        mock_provider::error_status(401, "invalid_api_key", "Incorrect API key provided"),
        Reply::Sse(cut_reply),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let stderr_path = logs.path().join("stderr.log");
    let mut daemon = Daemon::spawn_logging_to(
        home.path(),
        &mock_overrides(&provider),
        &[("OPENTURN_TEST_KEY", API_KEY), ("RUST_LOG", "trace")],
        &stderr_path,
    );
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let mut statuses = Vec::new();
    for text in ["hello", "again", "once more"] {
        daemon
            .request(
                "turn/start",
                json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]}),
            )
            .await;
        let turn = daemon.until_turn_completed().await;
        let completed = turn.last().cloned().unwrap_or_default();
        statuses.push(completed["params"]["turn"]["status"].clone());
    }
    assert_eq!(
        statuses,
        vec![json!("completed"), json!("failed"), json!("failed")]
    );
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));

    let requests = provider.requests();
    let posts: Vec<_> = requests.iter().filter(|r| r.method == "POST").collect();
    assert!(
        posts.len() >= 3,
        "expected three sampling requests, got {requests:?}"
    );
    let bearer = format!("Bearer {API_KEY}");
    for request in &posts {
        assert_eq!(request.header("authorization"), Some(bearer.as_str()));
    }

    let stderr = std::fs::read(&stderr_path).unwrap();
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(
        stderr.lines().count() > 10,
        "RUST_LOG=trace produced almost no log lines; the grep would prove nothing:\n{stderr}"
    );
    assert_no_secret("stderr", &stderr);
    let files = files_under(home.path());
    assert!(
        !rollout_files(home.path()).is_empty(),
        "no rollout written; the grep would prove nothing"
    );
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert_no_secret(
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
    for message in &daemon.transcript {
        assert_no_secret("stdout", &message.to_string());
    }
}

/// A loopback port nothing listens on: connecting to it is refused at once.
fn refusing_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

const QUERY_SECRET: &str = "azq-openturn-canary-5b81e2f4c7d9";

/// Overrides for a provider named `azure` at `base_url` whose key travels as a query parameter.
fn query_key_overrides(base_url: &str, wire_api: &str) -> Vec<String> {
    vec![
        "model=\"gpt-5\"".to_string(),
        "model_provider=\"azure\"".to_string(),
        format!("model_providers.azure.base_url=\"{base_url}\""),
        "model_providers.azure.name=\"azure\"".to_string(),
        "model_providers.azure.env_key=\"OPENTURN_TEST_KEY\"".to_string(),
        format!("model_providers.azure.wire_api=\"{wire_api}\""),
        format!("model_providers.azure.query_params.api-key=\"{QUERY_SECRET}\""),
        "model_providers.azure.query_params.api-version=\"2025-04-01-preview\"".to_string(),
        "model_providers.azure.request_max_retries=1".to_string(),
        "model_providers.azure.stream_max_retries=0".to_string(),
    ]
}

/// Runs one turn with `RUST_LOG=trace`, then asserts that neither the query secret nor the
/// header key is in stdout, stderr or any file of the home. Returns the turn's messages and
/// the log.
async fn one_turn_then_grep(overrides: &[String]) -> (Vec<serde_json::Value>, String) {
    let home = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let stderr_path = logs.path().join("stderr.log");
    let mut daemon = Daemon::spawn_logging_to(
        home.path(),
        overrides,
        &[("OPENTURN_TEST_KEY", API_KEY), ("RUST_LOG", "trace")],
        &stderr_path,
    );
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let turn = text_turn(&mut daemon, &thread_id, "hello").await;
    daemon.close_stdin();
    assert_eq!(daemon.wait_exit().await, Some(0));
    let check = |place: &str, text: &str| {
        assert_no_secret(place, text);
        if let Some(at) = text.find(QUERY_SECRET) {
            let start = at.saturating_sub(200);
            panic!(
                "{place} contains the query secret: …{}…",
                text.get(start..at + QUERY_SECRET.len())
                    .unwrap_or("<boundary>")
            );
        }
    };
    for message in &daemon.transcript {
        check("stdout", &message.to_string());
    }
    let stderr = std::fs::read(&stderr_path).unwrap();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    check("stderr", &stderr);
    assert!(
        !rollout_files(home.path()).is_empty(),
        "no rollout written; the grep would prove nothing"
    );
    for file in files_under(home.path()) {
        let bytes = std::fs::read(&file).unwrap();
        check(
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
    (turn, stderr)
}

/// A turn against an unreachable provider (a loopback port that refuses connections) fails
/// naming the URL without its query, and the secret is nowhere, retry log line included.
async fn unreachable_provider_with_a_key_in_the_query(wire_api: &str) {
    let port = refusing_port();
    let base_url = format!("http://127.0.0.1:{port}/openai");
    let (turn, stderr) = one_turn_then_grep(&query_key_overrides(&base_url, wire_api)).await;
    let completed = turn.last().cloned().unwrap_or_default();
    assert_eq!(completed["params"]["turn"]["status"], "failed", "{turn:#?}");
    let message = completed["params"]["turn"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains(&format!("127.0.0.1:{port}/openai/responses")),
        "the failure should still say where: {message}"
    );
    assert!(!message.contains('?'), "{message}");
    assert!(
        stderr.contains("retrying"),
        "the retry was not logged; the grep would miss that path:\n{stderr}"
    );
}

/// A turn against a reachable provider: the key really went out in the query (the provider
/// recorded it), and trace-level logs of the connection did not copy it.
async fn reachable_provider_with_a_key_in_the_query(wire_api: &str) {
    let provider = MockProvider::start(Script::new([Reply::Sse(
        mock_provider::simple_text_response("resp_1", "msg_1", "Hello", 3),
    )]))
    .await
    .unwrap();
    let overrides = query_key_overrides(&provider.base_url(), wire_api);
    let (turn, _stderr) = one_turn_then_grep(&overrides).await;
    let completed = turn.last().cloned().unwrap_or_default();
    assert_eq!(
        completed["params"]["turn"]["status"], "completed",
        "{turn:#?}"
    );
    let requests = provider.requests();
    assert!(
        requests.iter().any(|request| request
            .query
            .as_deref()
            .is_some_and(|query| query.contains(QUERY_SECRET))),
        "the key was never sent in the query: {requests:?}"
    );
}

#[tokio::test]
async fn a_key_in_query_params_stays_out_of_output_when_the_http_provider_is_unreachable() {
    unreachable_provider_with_a_key_in_the_query("responses").await;
}

#[tokio::test]
async fn a_key_in_query_params_stays_out_of_output_when_the_websocket_provider_is_unreachable() {
    unreachable_provider_with_a_key_in_the_query("responses_websocket").await;
}

#[tokio::test]
async fn a_key_in_query_params_stays_out_of_trace_logs_over_http() {
    reachable_provider_with_a_key_in_the_query("responses").await;
}

#[tokio::test]
async fn keys_stay_out_of_trace_logs_over_the_websocket_transport() {
    reachable_provider_with_a_key_in_the_query("responses_websocket").await;
}
