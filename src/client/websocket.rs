//! The Responses WebSocket transport (`wire_api = "responses_websocket"`): one connection per
//! attempt to `{base_url}/responses` (scheme `ws`/`wss`), one `response.create` message carrying
//! the request, then the same [`ResponseEvent`](crate::wire::ResponseEvent) stream as SSE.
//!
//! The handshake is the pre-stream boundary: a handshake refused with a status is classified and
//! retried exactly like an HTTP response; once `response.create` is sent, nothing is replayed.
//! The connection belongs to the stream's decoder task, so dropping the stream closes it.

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::wire::websocket::{response_create_message, WebSocketEventStream, WebSocketMessage};
use crate::wire::ResponsesRequest;

use super::error::{error_chain, shown_url, url_free, ClientError};
use super::headers::{read_facts, request_headers, retry_after, Accept, HeaderInputs};
use super::provider::ProviderInfo;
use super::request_context::RequestContext;
use super::stream::{ResponseStream, StreamDiagnostics};

/// Connects, sends `response.create`, and hands the socket to a [`ResponseStream`].
pub(super) async fn open_websocket_stream(
    provider: &ProviderInfo,
    request: &ResponsesRequest,
    context: &RequestContext,
) -> Result<ResponseStream, ClientError> {
    let config_error = |message: String| ClientError::Config {
        provider: provider.display_name().to_string(),
        message,
    };
    let url = websocket_url(provider).map_err(config_error)?;
    let mut handshake = url.as_str().into_client_request().map_err(|error| {
        let shown = shown_url(url.as_str());
        config_error(format!("invalid WebSocket URL `{shown}`: {error}"))
    })?;
    let inputs = HeaderInputs {
        thread_id: &context.thread_id,
        originator: &context.originator,
        turn_state: &context.turn_state,
        accept: Accept::Any,
    };
    handshake
        .headers_mut()
        .extend(request_headers(provider, &inputs)?);
    let (mut socket, response) = tokio_tungstenite::connect_async(handshake)
        .await
        .map_err(|error| handshake_error(provider, &url, error))?;
    let facts = read_facts(response.headers(), &context.turn_state);
    let message = response_create_message(request)
        .map_err(|error| config_error(format!("request could not be serialized: {error}")))?;
    socket
        .send(Message::text(message))
        .await
        .map_err(|error| connect_error(provider, &url, &error))?;
    let messages = socket.map(|message| message.map(websocket_message));
    let source = WebSocketEventStream::new(messages, provider.stream_idle_timeout());
    let diagnostics = StreamDiagnostics {
        provider: provider.display_name().to_string(),
        request_id: facts.request_id,
    };
    Ok(ResponseStream::new(source, facts.events, diagnostics))
}

/// `{base_url}/responses` with the provider's query parameters, `http` → `ws`, `https` → `wss`.
/// The query can hold a key: wherever this URL is shown, it goes through `shown_url`.
fn websocket_url(provider: &ProviderInfo) -> Result<reqwest::Url, String> {
    let mut url =
        reqwest::Url::parse_with_params(&provider.responses_url(), &provider.query_params)
            .map_err(|error| {
                let shown = shown_url(&provider.base_url);
                format!("invalid base_url `{shown}`: {error}")
            })?;
    let scheme = match url.scheme() {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        other => return Err(format!("unsupported URL scheme `{other}` for a WebSocket")),
    };
    url.set_scheme(scheme).map_err(|()| {
        format!(
            "cannot use scheme `{scheme}` with `{}`",
            shown_url(url.as_str())
        )
    })?;
    Ok(url)
}

fn websocket_message(message: Message) -> WebSocketMessage {
    match message {
        Message::Text(text) => WebSocketMessage::Text(text.as_str().to_owned()),
        Message::Close(_) => WebSocketMessage::Close,
        Message::Binary(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {
            WebSocketMessage::Other
        }
    }
}

/// A refused handshake is classified like an HTTP answer; anything else is a connect failure.
fn handshake_error(
    provider: &ProviderInfo,
    url: &reqwest::Url,
    error: tungstenite::Error,
) -> ClientError {
    match error {
        tungstenite::Error::Http(response) => {
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            ClientError::from_status(
                provider,
                response.status().as_u16(),
                &body,
                retry_after(response.headers()),
            )
        }
        other => connect_error(provider, url, &other),
    }
}

fn connect_error(
    provider: &ProviderInfo,
    url: &reqwest::Url,
    error: &tungstenite::Error,
) -> ClientError {
    ClientError::connect(provider, url.as_str(), url_free(&error_chain(error), url))
}
