//! `ModelClient`: opens a response stream on the provider's transport, retrying only before a
//! stream exists.
//!
//! Pre-stream policy: a 401 triggers one auth recovery (the key source is read again, since the
//! headers are rebuilt per attempt) and a retry; connection failures, 429 and 5xx are retried with
//! exponential backoff and jitter, honouring `Retry-After`, up to `request_max_retries`; any other
//! status fails at once with the provider's message. Once a stream exists, errors go up through
//! it and nothing is replayed here: the turn decides whether to re-sample from history.
//!
//! Each attempt (connect, send, response headers, any error body) is bounded by the provider's
//! `stream_idle_timeout`: a provider that accepts the connection but never answers would otherwise
//! hang the turn with no error. Running out of that time counts as a connection failure.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::wire::ResponsesRequest;

use super::error::ClientError;
use super::http::open_sse_stream;
use super::provider::{ProviderInfo, WireApi};
use super::request_context::RequestContext;
use super::retry::backoff;
use super::stream::ResponseStream;
use super::websocket::open_websocket_stream;

/// How long establishing a TCP (and TLS) connection may take. The whole attempt is bounded too,
/// by the provider's idle timeout; this keeps a black-holed address from using all of it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A request failed before its stream existed and is sent again after `delay`.
#[derive(Debug, Clone)]
pub struct RetryNotice {
    /// 1 for the first retry.
    pub attempt: u32,
    /// The provider's `request_max_retries`.
    pub max_retries: u32,
    pub delay: Duration,
    /// Why the attempt failed.
    pub error: ClientError,
}

/// A connection pool plus the request logic. Cheap to clone.
#[derive(Clone)]
pub struct ModelClient {
    http: reqwest::Client,
}

impl ModelClient {
    pub fn new() -> Result<ModelClient, ClientError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("openturn/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|error| ClientError::Config {
                provider: "http".to_string(),
                message: error.to_string(),
            })?;
        Ok(ModelClient { http })
    }

    /// The connection pool, shared by every exchange with providers.
    pub(super) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends `request` on the provider's transport and returns the stream of its events, retrying
    /// before the stream exists as the module docs describe. Cancel by dropping the future.
    pub async fn stream(
        &self,
        provider: &ProviderInfo,
        request: &ResponsesRequest,
        context: &RequestContext,
    ) -> Result<ResponseStream, ClientError> {
        self.stream_reporting_retries(provider, request, context, None)
            .await
    }

    /// [`ModelClient::stream`], telling `retries` about each retry before it waits, so the turn
    /// can tell the user what it is waiting for. A full channel drops the notice: the retry
    /// itself never waits on who listens.
    pub async fn stream_reporting_retries(
        &self,
        provider: &ProviderInfo,
        request: &ResponsesRequest,
        context: &RequestContext,
        retries_to: Option<&mpsc::Sender<RetryNotice>>,
    ) -> Result<ResponseStream, ClientError> {
        let body = match provider.wire_api {
            WireApi::Responses => {
                serde_json::to_vec(request).map_err(|error| ClientError::Config {
                    provider: provider.display_name().to_string(),
                    message: format!("request body could not be serialized: {error}"),
                })?
            }
            WireApi::ResponsesWebsocket => Vec::new(),
        };
        let mut retries = 0u32;
        let mut auth_recovered = false;
        loop {
            let attempt = self.attempt(provider, request, &body, context).await;
            match attempt {
                Ok(stream) => return Ok(stream),
                Err(ClientError::Unauthorized { .. }) if !auth_recovered => {
                    tracing::warn!(
                        provider = provider.display_name(),
                        "401; reading the API key again and retrying once"
                    );
                    auth_recovered = true;
                }
                Err(error) if error.is_retryable() && retries < provider.request_max_retries => {
                    retries += 1;
                    let delay = backoff(retries, error.retry_after());
                    // Reported to the turn (a client sees it as an `error` that will be retried),
                    // so the log line is for operators only.
                    tracing::info!(%error, retries, ?delay, "request failed; retrying");
                    if let Some(retries_to) = retries_to {
                        let _ = retries_to.try_send(RetryNotice {
                            attempt: retries,
                            max_retries: provider.request_max_retries,
                            delay,
                            error,
                        });
                    }
                    tokio::time::sleep(delay).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// One attempt, bounded by the provider's idle timeout until the stream exists.
    async fn attempt(
        &self,
        provider: &ProviderInfo,
        request: &ResponsesRequest,
        body: &[u8],
        context: &RequestContext,
    ) -> Result<ResponseStream, ClientError> {
        let open = async {
            match provider.wire_api {
                WireApi::Responses => open_sse_stream(&self.http, provider, body, context).await,
                WireApi::ResponsesWebsocket => {
                    open_websocket_stream(provider, request, context).await
                }
            }
        };
        let limit = provider.stream_idle_timeout();
        tokio::time::timeout(limit, open)
            .await
            .unwrap_or_else(|_elapsed| {
                Err(ClientError::connect(
                    provider,
                    &provider.responses_url(),
                    format!(
                        "no response within {} ms (stream_idle_timeout_ms)",
                        limit.as_millis()
                    ),
                ))
            })
    }
}
