//! Retries before a stream exists, against the loopback mock provider: 401 → one auth recovery,
//! 429/5xx → backoff honouring `Retry-After` up to `request_max_retries`, other 4xx → no retry,
//! and nothing replayed once bytes have flowed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_support;

use std::time::{Duration, Instant};

use client_support::{
    client, collect, context, mock_provider_info, request, start_provider, within,
};
use openturn::client::{ClientError, WireApi};
use openturn::mock_provider::{
    error_status, rate_limited, simple_text_response, Fault, MockProvider, Reply, Script,
};
use openturn::wire::{ResponseEvent, StreamError};

const BOTH: [WireApi; 2] = [WireApi::Responses, WireApi::ResponsesWebsocket];

fn ok_reply() -> Reply {
    simple_text_response("resp_ok", "msg_1", "fine", 2).into()
}

/// Requests that asked for a response (HTTP posts, or WebSocket handshakes).
fn attempts(mock: &MockProvider) -> usize {
    mock.requests()
        .iter()
        .filter(|request| request.method != "WEBSOCKET")
        .count()
}

#[tokio::test]
async fn a_401_is_recovered_once_by_reading_the_key_again_then_retried() {
    for wire_api in BOTH {
        let key_var = format!("OPENTURN_RETRY_TEST_KEY_{wire_api:?}");
        std::env::set_var(&key_var, "sk-current");
        let mock = start_provider(Script::new([
            error_status(401, "invalid_api_key", "bad key"),
            ok_reply(),
        ]))
        .await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.env_key = Some(key_var);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap_or_else(|error| panic!("{wire_api:?}: {error}"));
        assert!(matches!(
            collect(&mut stream).await.pop(),
            Some(Ok(ResponseEvent::Completed { .. }))
        ));
        assert_eq!(attempts(&mock), 2, "{wire_api:?}");
        let auth = mock.requests()[1]
            .header("authorization")
            .map(str::to_owned);
        assert_eq!(auth.as_deref(), Some("Bearer sk-current"));
    }
}

#[tokio::test]
async fn a_second_401_fails_without_further_attempts() {
    for wire_api in BOTH {
        let mock = start_provider(Script::new([
            error_status(401, "invalid_api_key", "bad key"),
            error_status(401, "invalid_api_key", "still bad"),
            ok_reply(),
        ]))
        .await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.request_max_retries = 3;
        let error = within(client().stream(&provider, &request(), &context()))
            .await
            .err();
        assert_eq!(
            error,
            Some(ClientError::Unauthorized {
                provider: "Mock Provider".to_string(),
                message: "still bad".to_string(),
            }),
            "{wire_api:?}"
        );
        assert_eq!(attempts(&mock), 2);
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_until_a_stream_opens() {
    for wire_api in BOTH {
        let quick_429 = Reply::Status {
            status: 429,
            headers: vec![("retry-after-ms".to_string(), "10".to_string())],
            body: r#"{"error":{"message":"slow down"}}"#.to_string(),
        };
        let mock = start_provider(Script::new([
            quick_429,
            error_status(503, "unavailable", "try later"),
            ok_reply(),
        ]))
        .await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.request_max_retries = 2;
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap_or_else(|error| panic!("{wire_api:?}: {error}"));
        assert!(matches!(
            collect(&mut stream).await.pop(),
            Some(Ok(ResponseEvent::Completed { .. }))
        ));
        assert_eq!(attempts(&mock), 3, "{wire_api:?}");
    }
}

/// A lower bound only: the retry must not come before the provider's `Retry-After`.
#[tokio::test]
async fn a_retry_waits_at_least_the_retry_after_the_provider_asked_for() {
    let mock = start_provider(Script::new([rate_limited(1), ok_reply()])).await;
    let mut provider = mock_provider_info(&mock, WireApi::Responses);
    provider.request_max_retries = 1;
    let started = Instant::now();
    let stream = within(client().stream(&provider, &request(), &context())).await;
    assert!(stream.is_ok());
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(attempts(&mock), 2);
}

#[tokio::test]
async fn retries_stop_after_request_max_retries() {
    for wire_api in BOTH {
        let script =
            Script::default().with_when_exhausted(error_status(500, "server_error", "boom"));
        let mock = start_provider(script).await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.request_max_retries = 2;
        let error = within(client().stream(&provider, &request(), &context()))
            .await
            .err();
        assert_eq!(
            error,
            Some(ClientError::Http {
                provider: "Mock Provider".to_string(),
                status: 500,
                message: "boom".to_string(),
                code: Some("server_error".to_string()),
                retry_after: None,
            }),
            "{wire_api:?}"
        );
        assert_eq!(attempts(&mock), 3, "{wire_api:?}");
    }
}

#[tokio::test]
async fn other_4xx_are_not_retried_and_keep_the_provider_message() {
    for wire_api in BOTH {
        let mock = start_provider(Script::new([
            error_status(
                400,
                "invalid_request_error",
                "Unsupported parameter: 'foo'.",
            ),
            ok_reply(),
        ]))
        .await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.request_max_retries = 4;
        let error = within(client().stream(&provider, &request(), &context()))
            .await
            .err()
            .unwrap_or_else(|| panic!("a 400 must fail"));
        assert_eq!(error.http_status(), Some(400));
        assert_eq!(
            error.to_string(),
            "provider `Mock Provider` answered HTTP 400: Unsupported parameter: 'foo'."
        );
        assert_eq!(attempts(&mock), 1, "{wire_api:?}");
        assert_eq!(mock.remaining_replies(), 1);
    }
}

#[tokio::test]
async fn once_bytes_have_flowed_an_error_goes_up_and_nothing_is_replayed() {
    for wire_api in BOTH {
        let cut =
            simple_text_response("resp_1", "msg_1", "Hello there", 3).with_fault(300, Fault::Cut);
        let mock = start_provider(Script::new([cut.into(), ok_reply()])).await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.request_max_retries = 4;
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        let events = collect(&mut stream).await;
        assert!(matches!(events.first(), Some(Ok(_))), "bytes flowed first");
        assert!(
            matches!(
                events.last(),
                Some(Err(
                    StreamError::Transport(_) | StreamError::ClosedBeforeCompleted
                ))
            ),
            "{wire_api:?}: {events:?}"
        );
        assert_eq!(attempts(&mock), 1, "{wire_api:?}");
        assert_eq!(mock.remaining_replies(), 1);
    }
}

#[tokio::test]
async fn an_unreachable_provider_is_retried_then_named_in_the_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    for wire_api in BOTH {
        let mock = start_provider(Script::default()).await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.base_url = format!("http://127.0.0.1:{port}/v1");
        provider.request_max_retries = 1;
        let error = within(client().stream(&provider, &request(), &context()))
            .await
            .err()
            .unwrap_or_else(|| panic!("nothing listens there"));
        assert!(matches!(error, ClientError::Connect { .. }), "{error:?}");
        assert!(error.to_string().contains("`Mock Provider`"), "{error}");
    }
}
