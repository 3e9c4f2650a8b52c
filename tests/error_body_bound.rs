//! A provider's error body is read only up to a bound: an endless error body still yields the
//! status error at once instead of being buffered whole.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_support;

use client_support::{context, mock_provider_info, request, within};
use openturn::client::{ClientError, ModelClient, ProviderInfo, WireApi};
use openturn::mock_provider::{MockProvider, Script};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers one request with a 500 whose body is announced as 16 MiB, sends 256 KiB of it, then
/// holds the connection open without sending the rest.
async fn endless_error_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        if !read_request(&mut socket).await {
            return;
        }
        let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\n\
                    content-length: 16777216\r\n\r\n{\"error\":{\"message\":\"";
        let padding = vec![b'z'; 256 * 1024];
        if socket.write_all(head.as_bytes()).await.is_err()
            || socket.write_all(&padding).await.is_err()
        {
            return;
        }
        // Keep the connection open: the rest of the body never comes.
        std::future::pending::<()>().await;
    });
    format!("http://{addr}/v1")
}

/// Reads one request (headers, then `content-length` bytes of body); false if the peer left.
async fn read_request(socket: &mut tokio::net::TcpStream) -> bool {
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    // Bounded: a request is small, and each iteration reads at least one byte or stops.
    for _ in 0..1024 {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if received.len() >= end + 4 + length {
                return true;
            }
        }
        match socket.read(&mut buffer).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
        }
    }
    false
}

#[tokio::test]
async fn an_error_body_is_read_only_up_to_its_bound() {
    let base_url = endless_error_server().await;
    let mock = within(MockProvider::start(Script::new([]))).await.unwrap();
    let provider = ProviderInfo {
        base_url,
        // Longer than the test step: only a bounded read can answer in time.
        stream_idle_timeout_ms: 60_000,
        ..mock_provider_info(&mock, WireApi::Responses)
    };
    let client = ModelClient::new().unwrap();
    let error = within(client.stream(&provider, &request(), &context()))
        .await
        .err();
    match error {
        Some(ClientError::Http {
            provider,
            status,
            message,
            ..
        }) => {
            assert_eq!((provider.as_str(), status), ("Mock Provider", 500));
            assert!(message.starts_with("{\"error\""), "{message}");
        }
        other => panic!("expected the 500, got {other:?}"),
    }
}
