//! The mock provider's accept loop and per-connection request handling:
//! routing, recording requests, serving replies, noticing hang-ups.
//!
//! This module owns the sockets and the state shared with the
//! [`super::MockProvider`] handle. Byte-level framing lives in `http.rs` and
//! SSE body writing in `sse.rs`; this file decides *what* to answer and races
//! every wait against the shutdown token, so no connection outlives the server.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::http::{self, HttpError, RequestHead};
use super::recorded::RecordedRequest;
use super::script::{Reply, SseReply};
use super::shared::Shared;
use super::sse::{with_counted_usage, write_sse_body, BodyEnd};
use super::websocket::{self, Upgrade};

/// While a reply streams we keep reading, to notice a hang-up; bytes a client
/// pipelines meanwhile are kept, but only up to this much.
const MAX_BUFFERED_WHILE_STREAMING: usize = 1024 * 1024;
/// Pause after a failed `accept` (e.g. out of file descriptors) so the loop
/// does not spin.
const ACCEPT_RETRY_DELAY: Duration = Duration::from_millis(20);

/// Accepts connections until `cancel` fires, then waits for every
/// connection task to finish (they watch the same token).
pub(super) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    cancel: CancellationToken,
) {
    // The mock provider's own tracker (see `MockProvider::start`): waited for right here.
    let connections = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _peer)) => {
                shared.connection_accepted();
                connections.spawn(serve_connection(
                    stream,
                    Arc::clone(&shared),
                    cancel.clone(),
                ));
            }
            Err(error) => {
                tracing::warn!(%error, "mock provider: accept failed");
                tokio::select! {
                    () = cancel.cancelled() => break,
                    () = tokio::time::sleep(ACCEPT_RETRY_DELAY) => {}
                }
            }
        }
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// The two halves of a connection plus the read buffer they share.
struct Connection {
    reader: OwnedReadHalf,
    writer: OwnedWriteHalf,
    buffer: BytesMut,
}

/// What to do with the connection after an exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
enum After {
    KeepAlive,
    Close,
    /// The 101 answer is written: the connection now speaks WebSocket.
    Upgrade(Box<Upgrade>),
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>, cancel: CancellationToken) {
    // Small SSE chunks must leave immediately, or latency measurements and
    // split-chunk tests would see Nagle's batching instead of our chunking.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "mock provider: set_nodelay failed");
    }
    let (reader, writer) = stream.into_split();
    let mut connection = Connection {
        reader,
        writer,
        buffer: BytesMut::with_capacity(8 * 1024),
    };
    let upgrade = loop {
        let exchange = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            exchange = serve_one_exchange(&mut connection, &shared) => exchange,
        };
        match exchange {
            After::KeepAlive => {}
            After::Close => return,
            After::Upgrade(upgrade) => break upgrade,
        }
    };
    let Connection {
        reader,
        writer,
        buffer,
    } = connection;
    match reader.reunite(writer) {
        Ok(stream) => websocket::serve(stream, buffer.to_vec(), *upgrade, &shared, &cancel).await,
        Err(error) => tracing::warn!(%error, "mock provider: cannot reunite the socket"),
    }
}

/// Reads one request, records it, and answers it.
async fn serve_one_exchange(connection: &mut Connection, shared: &Shared) -> After {
    let (head, body) = match read_request(connection).await {
        Ok(Some(request)) => request,
        Ok(None) => return After::Close,
        Err(error) => {
            reject(&mut connection.writer, &error).await;
            return After::Close;
        }
    };
    let close_requested = head.wants_close();
    if let Some(key) = websocket::upgrade_key(&head) {
        return answer_upgrade(connection, shared, head, key).await;
    }
    let request = recorded_request(head, body);
    tracing::debug!(method = %request.method, path = %request.path, "mock provider: request");
    // Recorded before answering, so a test can inspect the request even
    // while the reply stalls forever.
    let reply = if is_model_list(&request) {
        shared.answer_model_list(request)
    } else {
        let reply = match route(&request, shared) {
            Reply::Sse(reply) if reply.count_request_usage => {
                Reply::Sse(with_counted_usage(reply, request.raw_body.len()))
            }
            reply => reply,
        };
        shared.record(request);
        reply
    };
    let after = match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => write_status(connection, shared, status, &headers, &body, close_requested).await,
        Reply::Sse(reply) => write_sse(connection, shared, &reply, close_requested).await,
    };
    if close_requested {
        After::Close
    } else {
        after
    }
}

/// Answers a WebSocket upgrade of `…/responses`: refused with the next reply when that is a
/// plain status (so pre-stream retries can be tested over WebSocket too), else accepted with the
/// next SSE reply's headers (the handshake carries what an HTTP response head would).
async fn answer_upgrade(
    connection: &mut Connection,
    shared: &Shared,
    head: RequestHead,
    key: String,
) -> After {
    let upgrade = Upgrade {
        path: head.path.clone(),
        query: head.query.clone(),
        headers: head.headers.clone(),
    };
    let handshake = recorded_request(head, Bytes::new());
    shared.record(handshake.clone());
    let reply_headers = match shared.peek_reply() {
        Some(Reply::Status { .. }) => {
            let Some(Reply::Status {
                status,
                headers,
                body,
            }) = shared.next_reply(&handshake)
            else {
                return After::Close;
            };
            return write_status(connection, shared, status, &headers, &body, true).await;
        }
        Some(Reply::Sse(reply)) => reply.headers,
        None => Vec::new(),
    };
    let mut headers = response_headers(&reply_headers, &[]);
    headers.retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
    headers.extend(websocket::accept_headers(&key));
    let bytes = http::encode_head(101, &headers);
    if connection.writer.write_all(&bytes).await.is_err() {
        return After::Close;
    }
    After::Upgrade(Box::new(upgrade))
}

async fn read_request(
    connection: &mut Connection,
) -> Result<Option<(RequestHead, Bytes)>, HttpError> {
    let Some(head) = http::read_head(&mut connection.reader, &mut connection.buffer).await? else {
        return Ok(None);
    };
    let framing = head.body_framing()?;
    if head.expects_continue() && framing != http::BodyFraming::Empty {
        connection
            .writer
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await?;
    }
    let body = http::read_body(&mut connection.reader, &mut connection.buffer, framing).await?;
    Ok(Some((head, body)))
}

fn recorded_request(head: RequestHead, raw_body: Bytes) -> RecordedRequest {
    let body = serde_json::from_slice(&raw_body).unwrap_or(serde_json::Value::Null);
    RecordedRequest {
        method: head.method,
        path: head.path,
        query: head.query,
        headers: head.headers,
        body,
        raw_body,
    }
}

fn json_error(status: u16, code: &str, message: &str) -> Reply {
    let body = serde_json::json!({ "error": { "message": message, "type": "mock_provider", "code": code } });
    Reply::Status {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

fn route(request: &RecordedRequest, shared: &Shared) -> Reply {
    let method = request.method.as_str();
    if method == "POST" && request.path.ends_with("/responses") {
        return shared.next_reply(request).unwrap_or_else(|| {
            json_error(
                500,
                "mock_script_exhausted",
                "the mock provider has no scripted reply left",
            )
        });
    }
    json_error(
        404,
        "not_found",
        &format!("the mock provider does not serve {method} {}", request.path),
    )
}

/// `GET …/models`: answered with the list the test set (see [`Shared::answer_model_list`]).
fn is_model_list(request: &RecordedRequest) -> bool {
    request.method == "GET" && request.path.ends_with("/models")
}

/// Answers an unreadable request, when the error leaves anything to say.
async fn reject(writer: &mut OwnedWriteHalf, error: &HttpError) {
    tracing::debug!(%error, "mock provider: rejecting request");
    let Some(status) = error.response_status() else {
        return;
    };
    let headers = vec![
        ("content-type".to_owned(), "text/plain".to_owned()),
        (
            "content-length".to_owned(),
            error.to_string().len().to_string(),
        ),
        ("connection".to_owned(), "close".to_owned()),
    ];
    let mut bytes = http::encode_head(status, &headers);
    bytes.extend_from_slice(error.to_string().as_bytes());
    // The connection closes next either way; a failed write changes nothing.
    let _ = writer.write_all(&bytes).await;
}

/// The script's headers minus those whose framing we own, plus our defaults
/// for any the script did not set.
fn response_headers(
    script_headers: &[(String, String)],
    defaults: &[(&str, &str)],
) -> Vec<(String, String)> {
    const OURS: [&str; 3] = ["content-length", "transfer-encoding", "connection"];
    let mut headers: Vec<(String, String)> = script_headers
        .iter()
        .filter(|(name, _)| !OURS.iter().any(|ours| name.eq_ignore_ascii_case(ours)))
        .cloned()
        .collect();
    for (name, value) in defaults {
        if !headers
            .iter()
            .any(|(existing, _)| existing.eq_ignore_ascii_case(name))
        {
            headers.push(((*name).to_owned(), (*value).to_owned()));
        }
    }
    headers
}

async fn write_status(
    connection: &mut Connection,
    shared: &Shared,
    status: u16,
    script_headers: &[(String, String)],
    body: &str,
    close: bool,
) -> After {
    let content_type = if serde_json::from_str::<serde_json::Value>(body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut headers = response_headers(script_headers, &[("content-type", content_type)]);
    headers.push(("content-length".to_owned(), body.len().to_string()));
    if close {
        headers.push(("connection".to_owned(), "close".to_owned()));
    }
    let mut bytes = http::encode_head(status, &headers);
    bytes.extend_from_slice(body.as_bytes());
    // No hang-up watch here: a small reply fits in the socket buffer, and
    // reading could mistake a client's half-close for a hang-up.
    if connection.writer.write_all(&bytes).await.is_ok() {
        After::KeepAlive
    } else {
        shared.note_client_closed();
        After::Close
    }
}

async fn write_sse(
    connection: &mut Connection,
    shared: &Shared,
    reply: &SseReply,
    close: bool,
) -> After {
    let defaults = [
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
    ];
    let mut headers = response_headers(&reply.headers, &defaults);
    headers.push(("transfer-encoding".to_owned(), "chunked".to_owned()));
    if close {
        headers.push(("connection".to_owned(), "close".to_owned()));
    }
    let head = http::encode_head(200, &headers);
    let Connection {
        reader,
        writer,
        buffer,
    } = connection;
    let body_end = tokio::select! {
        end = write_head_and_body(writer, &head, reply) => end,
        () = watch_for_hang_up(reader, buffer) => BodyEnd::ClientGone,
    };
    match body_end {
        BodyEnd::Completed => After::KeepAlive,
        BodyEnd::Cut => {
            tracing::debug!("mock provider: cutting the connection as scripted");
            After::Close
        }
        BodyEnd::ClientGone => {
            shared.note_client_closed();
            After::Close
        }
    }
}

async fn write_head_and_body<W>(writer: &mut W, head: &[u8], reply: &SseReply) -> BodyEnd
where
    W: AsyncWrite + Unpin,
{
    if writer.write_all(head).await.is_err() {
        return BodyEnd::ClientGone;
    }
    write_sse_body(writer, reply).await
}

/// Completes when the client closes its side (or the socket fails). HTTP
/// clients do not half-close while awaiting a response, so end-of-stream here
/// means the client dropped the response. Bytes of a pipelined next request
/// are kept in `buffer`; past a bound we stop reading and rely on write errors
/// instead.
async fn watch_for_hang_up<R>(reader: &mut R, buffer: &mut BytesMut)
where
    R: AsyncRead + Unpin,
{
    while buffer.len() < MAX_BUFFERED_WHILE_STREAMING {
        match reader.read_buf(buffer).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
    std::future::pending().await
}
