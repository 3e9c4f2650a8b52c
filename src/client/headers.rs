//! Request headers sent to a provider, and the sticky turn state they carry.
//!
//! One header set serves both transports (the HTTP POST and the WebSocket handshake): auth
//! (`Authorization: Bearer` or an Azure-style key header), the provider's static `http_headers`,
//! `env_http_headers` read at request time, identity headers, and the turn state the provider
//! asked us to echo.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::wire::headers::{read_response_headers, ResponseHeaderFacts, TURN_STATE_HEADER};

use super::auth::read_api_key;
use super::error::ClientError;
use super::provider::ProviderInfo;

/// The sticky routing value of one turn. The first value a provider sends wins and is echoed on
/// every later request of the turn (the provider pins the turn to one backend with it); a new
/// turn starts with a new, empty `TurnState`.
#[derive(Debug, Clone, Default)]
pub struct TurnState(Arc<Mutex<Option<String>>>);

impl TurnState {
    pub fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|state| state.clone())
    }

    /// Stores `value` unless the turn already has one.
    pub fn remember(&self, value: &str) {
        if let Ok(mut state) = self.0.lock() {
            if state.is_none() {
                *state = Some(value.to_string());
            }
        }
    }
}

/// Whether the body is expected as SSE (HTTP) or not (WebSocket handshake).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Accept {
    EventStream,
    Any,
}

/// Identity of the request, beside the provider settings.
pub(super) struct HeaderInputs<'a> {
    pub thread_id: &'a str,
    pub originator: &'a str,
    pub turn_state: &'a TurnState,
    pub accept: Accept,
}

pub(super) fn request_headers(
    provider: &ProviderInfo,
    inputs: &HeaderInputs<'_>,
) -> Result<HeaderMap, ClientError> {
    let mut headers = HeaderMap::new();
    let mut insert = |name: &str, value: &str| insert_header(&mut headers, provider, name, value);
    if inputs.accept == Accept::EventStream {
        insert("accept", "text/event-stream")?;
        insert("content-type", "application/json")?;
    }
    if !inputs.originator.is_empty() {
        insert("originator", inputs.originator)?;
    }
    if !inputs.thread_id.is_empty() {
        insert("session-id", inputs.thread_id)?;
        insert("thread-id", inputs.thread_id)?;
    }
    // Read at every attempt, so a 401 recovers by picking up a corrected key.
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
        if let Some(value) = std::env::var(env_var).ok().filter(|v| !v.is_empty()) {
            insert(name, &value)?;
        }
    }
    if let Some(state) = inputs.turn_state.get() {
        insert(TURN_STATE_HEADER, &state)?;
    }
    Ok(headers)
}

fn insert_header(
    headers: &mut HeaderMap,
    provider: &ProviderInfo,
    name: &str,
    value: &str,
) -> Result<(), ClientError> {
    let config_error = |message: String| ClientError::Config {
        provider: provider.display_name().to_string(),
        message,
    };
    let header_name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| config_error(format!("invalid header name `{name}`")))?;
    let mut header_value = HeaderValue::from_str(value)
        .map_err(|_| config_error(format!("invalid value for header `{name}`")))?;
    if header_name == "authorization" || Some(name) == provider.api_key_header.as_deref() {
        header_value.set_sensitive(true);
    }
    headers.insert(header_name, header_value);
    Ok(())
}

/// Reads the response header facts and stores the turn state they carry.
pub(super) fn read_facts(headers: &HeaderMap, turn_state: &TurnState) -> ResponseHeaderFacts {
    let facts = read_response_headers(|name| header_str(headers, name).map(str::to_string));
    if let Some(state) = facts.turn_state.as_deref() {
        turn_state.remember(state);
    }
    facts
}

pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds, possibly fractional). HTTP dates are
/// not honoured: providers of this API send delays.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) =
        header_str(headers, "retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    header_str(headers, "retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
}
