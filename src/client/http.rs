//! The HTTP transport: one `POST {base_url}/responses` per attempt, answered with SSE.
//!
//! An attempt either yields a [`ResponseStream`] (status 2xx: from here on nothing is replayed)
//! or a [`ClientError`] saying whether another attempt may help; the retry loop is in
//! `transport.rs`.
//!
//! An error body is read only up to [`MAX_ERROR_BODY_BYTES`]: it is shown to the user, not
//! parsed at length, and a provider or proxy must not be able to make us buffer without limit.

use futures::StreamExt;

use crate::wire::sse::SseEventStream;

use super::error::{error_chain, ClientError};
use super::headers::{read_facts, request_headers, retry_after, Accept, HeaderInputs};
use super::provider::ProviderInfo;
use super::request_context::RequestContext;
use super::stream::{ResponseStream, StreamDiagnostics};

/// The most bytes of a non-success response body that are read.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

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
    // reqwest's errors name the full request URL, query parameters (a key, for some providers)
    // included: the error names the URL itself, without them.
    let response = result
        .map_err(|error| ClientError::connect(provider, &url, error_chain(&error.without_url())))?;
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let retry_after = retry_after(response.headers());
        let text = bounded_text(response, MAX_ERROR_BODY_BYTES).await;
        return Err(ClientError::from_status(
            provider,
            status,
            &text,
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
    // Body errors carry no URL today; stripping it keeps that true whatever reqwest does later.
    let body = response
        .bytes_stream()
        .map(|chunk| chunk.map_err(reqwest::Error::without_url))
        .boxed();
    let source = SseEventStream::new(body, provider.stream_idle_timeout());
    let diagnostics = StreamDiagnostics {
        provider: provider.display_name().to_string(),
        request_id: facts.request_id,
    };
    Ok(ResponseStream::new(source, facts.events, diagnostics))
}

/// At most `limit` bytes of the body, decoded lossily (a cut character becomes U+FFFD). A body
/// that fails midway keeps what arrived: the status already says what went wrong.
async fn bounded_text(mut response: reqwest::Response, limit: usize) -> String {
    let mut body = Vec::new();
    // Bounded: each iteration reads one chunk, and it stops at `limit` bytes.
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(limit - body.len());
                body.extend_from_slice(&chunk[..take]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}
