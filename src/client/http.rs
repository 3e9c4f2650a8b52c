//! The HTTP transport: one `POST {base_url}/responses` per attempt, answered with SSE.
//!
//! An attempt either yields a [`ResponseStream`] (status 2xx: from here on nothing is replayed)
//! or a [`ClientError`] saying whether another attempt may help; the retry loop is in
//! `transport.rs`.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderMap;

use crate::wire::sse::SseEventStream;

use super::error::{error_chain, provider_message, ClientError};
use super::headers::{header_str, read_facts, request_headers, Accept, HeaderInputs};
use super::provider::ProviderInfo;
use super::stream::{ResponseStream, StreamDiagnostics};
use super::transport::RequestContext;

/// Sends the serialized request once.
pub(super) async fn open_sse_stream(
    http: &reqwest::Client,
    provider: &ProviderInfo,
    body: &[u8],
    context: &RequestContext,
) -> Result<ResponseStream, ClientError> {
    let url = provider.responses_url();
    let inputs = HeaderInputs {
        thread_id: &context.thread_id,
        originator: &context.originator,
        turn_state: &context.turn_state,
        accept: Accept::EventStream,
    };
    let headers = request_headers(provider, &inputs)?;
    let result = http
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
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let retry_after = retry_after(response.headers());
        let text = response.text().await.unwrap_or_default();
        return Err(ClientError::from_status(
            provider,
            status,
            provider_message(&text),
            retry_after,
        ));
    }
    let facts = read_facts(response.headers(), &context.turn_state);
    if let Some(request_id) = facts.request_id.as_deref() {
        tracing::debug!(
            request_id,
            provider = provider.display_name(),
            "SSE stream opened"
        );
    }
    let body = response.bytes_stream().boxed();
    let source = SseEventStream::new(body, provider.stream_idle_timeout());
    let diagnostics = StreamDiagnostics {
        provider: provider.display_name().to_string(),
        request_id: facts.request_id,
    };
    Ok(ResponseStream::spawn(source, facts.events, diagnostics))
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
