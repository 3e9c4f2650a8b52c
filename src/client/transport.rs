//! The HTTP transport: one POST per sampling request, retried only before the body is read.

use std::sync::{Arc, Mutex};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::wire::event::{RateLimitSnapshot, RateLimitWindow};
use crate::wire::{ResponseEvent, ResponsesRequest};

use super::auth::read_api_key;
use super::error::ClientError;
use super::provider::ProviderInfo;
use super::retry::backoff;
use super::stream::ResponseStream;

/// The sticky routing header a provider may set; sent back on every later request of the turn.
const TURN_STATE_HEADER: &str = "x-codex-turn-state";

/// Per-request facts that are not part of the body.
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    pub thread_id: String,
    /// The client's name (`clientInfo.name`), sent as the `originator` header.
    pub originator: String,
    /// Shared by all requests of one turn.
    pub turn_state: Arc<Mutex<Option<String>>>,
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
            .build()
            .map_err(|error| ClientError::Config {
                provider: "http".to_string(),
                message: error.to_string(),
            })?;
        Ok(ModelClient { http })
    }

    /// Sends `request` and returns the stream of its events. Retries connection failures, 429 and
    /// 5xx with backoff (honouring `Retry-After`) up to `request_max_retries`, and recovers once
    /// from a 401 by reading the key again. Cancel by dropping the future.
    pub async fn stream(
        &self,
        provider: &ProviderInfo,
        request: &ResponsesRequest,
        context: &RequestContext,
    ) -> Result<ResponseStream, ClientError> {
        let body = serde_json::to_vec(request).map_err(|error| ClientError::Config {
            provider: provider.display_name().to_string(),
            message: format!("request body could not be serialized: {error}"),
        })?;
        let mut retries = 0u32;
        let mut auth_recovered = false;
        loop {
            match self.send_once(provider, &body, context).await {
                Ok(response) => {
                    let header_events = header_events(response.headers());
                    if let Some(request_id) = header_str(response.headers(), "x-request-id") {
                        tracing::debug!(request_id, "response stream opened");
                    }
                    remember_turn_state(response.headers(), context);
                    return Ok(ResponseStream::spawn(
                        response,
                        provider.stream_idle_timeout(),
                        header_events,
                    ));
                }
                Err(ClientError::Unauthorized { .. }) if !auth_recovered => {
                    tracing::warn!(
                        provider = provider.display_name(),
                        "401; re-reading the API key once"
                    );
                    auth_recovered = true;
                }
                Err(error) if error.is_retryable() && retries < provider.request_max_retries => {
                    retries += 1;
                    let suggested = match &error {
                        ClientError::Http { retry_after, .. } => *retry_after,
                        _ => None,
                    };
                    let delay = backoff(retries, suggested);
                    tracing::warn!(%error, retries, ?delay, "request failed; retrying");
                    tokio::time::sleep(delay).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    async fn send_once(
        &self,
        provider: &ProviderInfo,
        body: &[u8],
        context: &RequestContext,
    ) -> Result<reqwest::Response, ClientError> {
        let url = provider.responses_url();
        let headers = request_headers(provider, context)?;
        let result = self
            .http
            .post(&url)
            .query(&provider.query_params)
            .headers(headers)
            .body(body.to_vec())
            .send()
            .await;
        let response = result.map_err(|error| ClientError::Connect {
            provider: provider.display_name().to_string(),
            url: url.clone(),
            message: error_chain(&error),
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = header_str(response.headers(), "retry-after")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(|secs| std::time::Duration::try_from_secs_f64(secs).ok());
        let text = response.text().await.unwrap_or_default();
        let message = provider_message(&text);
        let provider_name = provider.display_name().to_string();
        if status.as_u16() == 401 {
            return Err(ClientError::Unauthorized {
                provider: provider_name,
                message,
            });
        }
        Err(ClientError::Http {
            provider: provider_name,
            status: status.as_u16(),
            message,
            retry_after,
        })
    }
}

fn request_headers(
    provider: &ProviderInfo,
    context: &RequestContext,
) -> Result<HeaderMap, ClientError> {
    let config_error = |message: String| ClientError::Config {
        provider: provider.display_name().to_string(),
        message,
    };
    let mut headers = HeaderMap::new();
    let mut insert = |name: &str, value: &str| -> Result<(), ClientError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| config_error(format!("invalid header name `{name}`")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| config_error(format!("invalid value for header `{name}`")))?;
        if name == "authorization" || name == "api-key" {
            value.set_sensitive(true);
        }
        headers.insert(name, value);
        Ok(())
    };
    insert("accept", "text/event-stream")?;
    insert("content-type", "application/json")?;
    if !context.originator.is_empty() {
        insert("originator", &context.originator)?;
    }
    if !context.thread_id.is_empty() {
        insert("session-id", &context.thread_id)?;
        insert("thread-id", &context.thread_id)?;
    }
    if let Some(key) = read_api_key(provider)? {
        match provider.api_key_header.as_deref() {
            Some(header) => insert(header, key.expose())?,
            None => insert("authorization", &format!("Bearer {}", key.expose()))?,
        }
    }
    for (name, value) in &provider.http_headers {
        insert(name, value)?;
    }
    for (name, env_var) in &provider.env_http_headers {
        if let Ok(value) = std::env::var(env_var) {
            if !value.is_empty() {
                insert(name, &value)?;
            }
        }
    }
    let turn_state = context
        .turn_state
        .lock()
        .ok()
        .and_then(|state| state.clone());
    if let Some(state) = turn_state {
        insert(TURN_STATE_HEADER, &state)?;
    }
    Ok(headers)
}

fn remember_turn_state(headers: &HeaderMap, context: &RequestContext) {
    if let Some(state) = header_str(headers, TURN_STATE_HEADER) {
        if let Ok(mut slot) = context.turn_state.lock() {
            *slot = Some(state.to_string());
        }
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// Events derived from response headers; they precede the first SSE frame.
fn header_events(headers: &HeaderMap) -> Vec<ResponseEvent> {
    let mut events = Vec::new();
    if let Some(model) = header_str(headers, "openai-model") {
        events.push(ResponseEvent::ServerModel(model.to_string()));
    }
    let window = |prefix: &str| -> Option<RateLimitWindow> {
        let used = header_str(headers, &format!("x-codex-{prefix}-used-percent"))?
            .parse::<f64>()
            .ok()?;
        Some(RateLimitWindow {
            used_percent: used,
            window_minutes: header_str(headers, &format!("x-codex-{prefix}-window-minutes"))
                .and_then(|v| v.parse().ok()),
            resets_at: header_str(headers, &format!("x-codex-{prefix}-reset-at"))
                .and_then(|v| v.parse().ok()),
        })
    };
    let snapshot = RateLimitSnapshot {
        primary: window("primary"),
        secondary: window("secondary"),
    };
    if snapshot.primary.is_some() || snapshot.secondary.is_some() {
        events.push(ResponseEvent::RateLimits(snapshot));
    }
    events
}

/// The provider's own error message from a JSON error body, else the body text.
fn provider_message(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: Option<Inner>,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        message: Option<String>,
    }
    serde_json::from_str::<Envelope>(body)
        .ok()
        .and_then(|envelope| envelope.error)
        .and_then(|inner| inner.message)
        .unwrap_or_else(|| body.trim().chars().take(2000).collect())
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}
