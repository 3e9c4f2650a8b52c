//! The mock provider's Responses WebSocket mode: `GET …/responses` with `Upgrade: websocket` on
//! the same listener as HTTP.
//!
//! After the 101 answer, every `response.create` text message is recorded (as a request with
//! method `WEBSOCKET`, the handshake's path, query and headers, and the message as body) and
//! answered with the next scripted [`Reply`]: an SSE reply's events are sent one text message
//! each, honouring `pace`, `fault` (counted in message bytes; a cut drops the TCP connection, a
//! stall sends nothing more) and `hold_open_after_end`; a status reply becomes one `error` event.
//! Chunking and send-time stamps have no meaning here and are ignored. The connection serves
//! further `response.create` messages until the client closes it.
//!
//! This module owns the socket after the upgrade; the handshake itself is answered by
//! `server.rs`, which owns HTTP.

use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::http::RequestHead;
use super::recorded::RecordedRequest;
use super::script::{Fault, Reply, SseReply};
use super::shared::Shared;

/// What the handshake said, kept to label the requests recorded on this connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Upgrade {
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
}

type Sink = SplitSink<WebSocketStream<TcpStream>, Message>;
type Source = SplitStream<WebSocketStream<TcpStream>>;

/// The `Sec-WebSocket-Key` of a WebSocket upgrade of the responses endpoint, if `head` is one.
pub(super) fn upgrade_key(head: &RequestHead) -> Option<String> {
    let is_upgrade = head.method == "GET"
        && head.path.ends_with("/responses")
        && head
            .header("upgrade")
            .is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    is_upgrade
        .then(|| head.header("sec-websocket-key").map(str::to_owned))
        .flatten()
}

/// The headers that accept an upgrade.
pub(super) fn accept_headers(key: &str) -> Vec<(String, String)> {
    vec![
        ("upgrade".to_owned(), "websocket".to_owned()),
        ("connection".to_owned(), "Upgrade".to_owned()),
        (
            "sec-websocket-accept".to_owned(),
            derive_accept_key(key.as_bytes()),
        ),
    ]
}

/// Serves one upgraded connection until the client closes it or the server shuts down.
pub(super) async fn serve(
    stream: TcpStream,
    already_read: Vec<u8>,
    upgrade: Upgrade,
    shared: &Shared,
    cancel: &CancellationToken,
) {
    let socket =
        WebSocketStream::from_partially_read(stream, already_read, Role::Server, None).await;
    let (mut sink, mut source) = socket.split();
    loop {
        let message = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            message = source.next() => message,
        };
        let text = match message {
            Some(Ok(Message::Text(text))) => text.as_str().to_owned(),
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
            Some(Ok(_)) => continue,
        };
        let request = recorded_message(&upgrade, text);
        let reply = shared.next_reply(&request);
        shared.record(request);
        let reply = reply
            .unwrap_or_else(|| Reply::status(500, "the mock provider has no scripted reply left"));
        let end = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            end = answer(&mut sink, reply) => end,
            () = wait_for_close(&mut source) => ReplyEnd::ClientGone,
        };
        match end {
            ReplyEnd::Done => {}
            ReplyEnd::Cut => return,
            ReplyEnd::ClientGone => {
                shared.note_client_closed();
                return;
            }
        }
    }
}

fn recorded_message(upgrade: &Upgrade, text: String) -> RecordedRequest {
    RecordedRequest {
        method: "WEBSOCKET".to_owned(),
        path: upgrade.path.clone(),
        query: upgrade.query.clone(),
        headers: upgrade.headers.clone(),
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        raw_body: text.into(),
    }
}

/// How answering one `response.create` ended.
enum ReplyEnd {
    /// All events sent; ready for the next request on this connection.
    Done,
    /// A scripted cut: drop the connection without a close frame.
    Cut,
    /// The client went away mid-reply.
    ClientGone,
}

async fn answer(sink: &mut Sink, reply: Reply) -> ReplyEnd {
    match reply {
        Reply::Sse(reply) => send_events(sink, &reply).await,
        Reply::Status { status, body, .. } => {
            let error = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|value| value.get("error").cloned())
                .unwrap_or_else(|| json!({ "message": body }));
            let event = json!({ "type": "error", "status": status, "error": error });
            match sink.send(Message::text(event.to_string())).await {
                Ok(()) => ReplyEnd::Done,
                Err(_) => ReplyEnd::ClientGone,
            }
        }
    }
}

/// Never returns for a stalled or held-open reply; the caller races it against a hang-up.
async fn send_events(sink: &mut Sink, reply: &SseReply) -> ReplyEnd {
    let start = Instant::now();
    let mut budget = reply.fault.map(|(bytes, _)| bytes);
    for (index, event) in reply.events.iter().enumerate() {
        if let Some(pace) = reply.pace.filter(|_| index > 0) {
            let offset = pace.saturating_mul(u32::try_from(index).unwrap_or(u32::MAX));
            tokio::time::sleep_until(start + offset).await;
        }
        if let Some(left) = budget {
            if event.data.len() > left {
                return fault(reply).await;
            }
            budget = Some(left - event.data.len());
        }
        if sink.send(Message::text(event.data.clone())).await.is_err() {
            return ReplyEnd::ClientGone;
        }
    }
    if reply.fault.is_some() {
        // A fault beyond the end of the body fires after the last event, as over SSE.
        return fault(reply).await;
    }
    if reply.hold_open_after_end {
        return std::future::pending().await;
    }
    ReplyEnd::Done
}

async fn fault(reply: &SseReply) -> ReplyEnd {
    match reply.fault {
        Some((_, Fault::Cut)) => ReplyEnd::Cut,
        _ => std::future::pending().await,
    }
}

/// Completes when the client closes the connection or it fails; other messages during a reply
/// are ignored (a client sends nothing while it awaits a response).
async fn wait_for_close(source: &mut Source) {
    // Bounded by the connection's life: each iteration consumes a message the client sent.
    while let Some(Ok(message)) = source.next().await {
        if matches!(message, Message::Close(_)) {
            return;
        }
    }
}
