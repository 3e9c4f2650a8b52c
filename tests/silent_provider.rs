//! A provider that accepts the TCP connection but never answers: each attempt gives up after the
//! provider's `stream_idle_timeout`, is retried like a connection failure, and the turn ends
//! `failed` with an error naming the provider instead of hanging.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_support;
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use client_support::{context, mock_provider_info, request, within};
use openturn::client::{ClientError, ModelClient, ProviderInfo, WireApi};
use serde_json::json;
use support::{mock_overrides, Daemon, MockProvider, Script};
use tokio::net::TcpListener;

/// Accepts connections on 127.0.0.1 and keeps them open without writing a byte; counts them.
struct SilentServer {
    addr: std::net::SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl SilentServer {
    async fn start() -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            for _ in 0..32 {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                counter.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        SilentServer { addr, accepted }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

fn silent_provider(server: &SilentServer, template: ProviderInfo) -> ProviderInfo {
    ProviderInfo {
        base_url: server.base_url(),
        request_max_retries: 1,
        stream_idle_timeout_ms: 200,
        ..template
    }
}

#[tokio::test]
async fn a_provider_that_never_answers_fails_the_request_after_its_retries() {
    for wire_api in [WireApi::Responses, WireApi::ResponsesWebsocket] {
        let server = SilentServer::start().await;
        // The mock only supplies the provider template; its address is replaced.
        let mock = within(MockProvider::start(Script::new([]))).await.unwrap();
        let provider = silent_provider(&server, mock_provider_info(&mock, wire_api));
        let client = ModelClient::new().unwrap();
        let error = within(client.stream(&provider, &request(), &context()))
            .await
            .err();
        match error {
            Some(ClientError::Connect {
                provider, message, ..
            }) => {
                assert_eq!(provider, "Mock Provider", "{wire_api:?}");
                assert!(
                    message.contains("no response within 200 ms"),
                    "{wire_api:?}: {message}"
                );
            }
            other => panic!("{wire_api:?}: expected a connection failure, got {other:?}"),
        }
        assert_eq!(
            server.accepted.load(Ordering::SeqCst),
            2,
            "{wire_api:?}: one attempt plus one retry"
        );
    }
}

#[tokio::test]
async fn a_turn_against_a_silent_provider_ends_failed_naming_the_provider() {
    let server = SilentServer::start().await;
    let mock = within(MockProvider::start(Script::new([]))).await.unwrap();
    let mut overrides: Vec<String> = mock_overrides(&mock)
        .into_iter()
        .map(|line| {
            if line.starts_with("model_providers.mock.base_url=") {
                format!("model_providers.mock.base_url=\"{}\"", server.base_url())
            } else {
                line
            }
        })
        .collect();
    overrides.push("model_providers.mock.stream_idle_timeout_ms=200".to_string());
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let thread_id = daemon.start_thread(json!({})).await;
    let turn = support::text_turn(&mut daemon, &thread_id, "hello?").await;
    let ends: Vec<_> = turn
        .iter()
        .filter(|message| message["method"] == "turn/completed")
        .collect();
    assert_eq!(ends.len(), 1, "{turn:#?}");
    let end = &ends[0]["params"]["turn"];
    assert_eq!(end["status"], "failed", "{turn:#?}");
    let message = end["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`mock`") && message.contains("no response within 200 ms"),
        "{message}"
    );
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        1,
        "no retries configured"
    );
}
