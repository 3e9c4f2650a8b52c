//! The API key and the `Authorization` header value never leave the request to the provider:
//! with `RUST_LOG=trace`, they appear in no stderr log line, no rollout file and no message on
//! stdout — on a successful turn, on a 401 from the provider, and on a provider that cuts the
//! stream. The provider's recorded request proves the key was really sent, so the greps below
//! search for something the daemon held.

mod support;

use std::path::Path;

use serde_json::json;
use support::*;

const API_KEY: &str = "sk-openturn-canary-9f27c4e1d8b3a6q5";
/// A middle slice of the key: a partially masked key must not reveal it either.
const KEY_MIDDLE: &str = "canary-9f27c4e1";

fn all_files_under(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

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
    .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let logs = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
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

    let stderr = std::fs::read(&stderr_path).unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(
        stderr.lines().count() > 10,
        "RUST_LOG=trace produced almost no log lines; the grep would prove nothing:\n{stderr}"
    );
    assert_no_secret("stderr", &stderr);
    let files = all_files_under(home.path());
    assert!(
        !rollout_files(home.path()).is_empty(),
        "no rollout written; the grep would prove nothing"
    );
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_no_secret(
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
    for message in &daemon.transcript {
        assert_no_secret("stdout", &message.to_string());
    }
}
