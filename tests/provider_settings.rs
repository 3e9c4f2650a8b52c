//! Provider configuration on the wire, checked against what the loopback mock recorded:
//! Azure-style key header and `api-version` query, static and environment headers, custom base
//! URLs, and errors that name the provider.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_support;

use std::collections::BTreeMap;

use client_support::{client, collect, context, mock_provider_info, request, within};
use openturn::client::{ClientError, WireApi};
use openturn::mock_provider::{simple_text_response, MockProvider, Script};

const BOTH: [WireApi; 2] = [WireApi::Responses, WireApi::ResponsesWebsocket];

async fn start() -> MockProvider {
    let reply = simple_text_response("resp_1", "msg_1", "hi", 1);
    within(MockProvider::start(Script::new([reply.into()])))
        .await
        .unwrap()
}

#[tokio::test]
async fn azure_style_providers_send_the_key_in_api_key_and_the_api_version_query() {
    for wire_api in BOTH {
        let key_var = format!("OPENTURN_AZURE_TEST_KEY_{wire_api:?}");
        std::env::set_var(&key_var, "azure-secret");
        let mock = start().await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.base_url = format!("{}/openai/deployments/gpt", mock.base_url());
        provider.env_key = Some(key_var);
        provider.api_key_header = Some("api-key".to_string());
        provider.query_params =
            BTreeMap::from([("api-version".to_string(), "2025-04-01-preview".to_string())]);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        collect(&mut stream).await;
        let sent = &mock.requests()[0];
        assert_eq!(
            sent.path, "/v1/openai/deployments/gpt/responses",
            "{wire_api:?}"
        );
        assert_eq!(
            sent.query.as_deref(),
            Some("api-version=2025-04-01-preview")
        );
        assert_eq!(sent.header("api-key"), Some("azure-secret"));
        assert_eq!(sent.header("authorization"), None);
    }
}

#[tokio::test]
async fn static_and_environment_headers_are_sent_and_unset_variables_are_skipped() {
    std::env::set_var("OPENTURN_PROVIDER_TEST_PROJECT", "proj_42");
    std::env::remove_var("OPENTURN_PROVIDER_TEST_UNSET");
    for wire_api in BOTH {
        let mock = start().await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.http_headers = BTreeMap::from([("x-team".to_string(), "editors".to_string())]);
        provider.env_http_headers = BTreeMap::from([
            (
                "openai-project".to_string(),
                "OPENTURN_PROVIDER_TEST_PROJECT".to_string(),
            ),
            (
                "x-unset".to_string(),
                "OPENTURN_PROVIDER_TEST_UNSET".to_string(),
            ),
        ]);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        collect(&mut stream).await;
        let sent = &mock.requests()[0];
        assert_eq!(sent.header("x-team"), Some("editors"), "{wire_api:?}");
        assert_eq!(sent.header("openai-project"), Some("proj_42"));
        assert_eq!(sent.header("x-unset"), None);
        assert_eq!(sent.header("session-id"), Some("thread_1"));
        assert_eq!(
            sent.header("authorization"),
            None,
            "no env_key, no auth header"
        );
    }
}

#[tokio::test]
async fn a_missing_key_is_reported_with_the_provider_and_the_variable() {
    let mock = start().await;
    let mut provider = mock_provider_info(&mock, WireApi::Responses);
    provider.env_key = Some("OPENTURN_PROVIDER_TEST_NO_SUCH_KEY".to_string());
    let error = within(client().stream(&provider, &request(), &context()))
        .await
        .err();
    assert_eq!(
        error,
        Some(ClientError::MissingApiKey {
            provider: "Mock Provider".to_string(),
            env_key: "OPENTURN_PROVIDER_TEST_NO_SUCH_KEY".to_string(),
        })
    );
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn an_invalid_configured_header_is_a_config_error_naming_the_provider() {
    let mock = start().await;
    let mut provider = mock_provider_info(&mock, WireApi::Responses);
    provider.http_headers = BTreeMap::from([("bad header".to_string(), "v".to_string())]);
    let error = within(client().stream(&provider, &request(), &context()))
        .await
        .err()
        .unwrap_or_else(|| panic!("an invalid header name must fail"));
    assert_eq!(
        error.to_string(),
        "provider `Mock Provider` is misconfigured: invalid header name `bad header`"
    );
}

#[tokio::test]
async fn a_websocket_provider_with_an_unusable_base_url_fails_naming_the_provider() {
    let mock = start().await;
    let mut provider = mock_provider_info(&mock, WireApi::ResponsesWebsocket);
    provider.base_url = "ftp://127.0.0.1/v1".to_string();
    let error = within(client().stream(&provider, &request(), &context()))
        .await
        .err()
        .unwrap_or_else(|| panic!("ftp is no WebSocket scheme"));
    assert!(matches!(error, ClientError::Config { .. }), "{error:?}");
    assert!(error.to_string().contains("`Mock Provider`"), "{error}");
}
