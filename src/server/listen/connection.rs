//! One WebSocket connection of a listener: text frames in, one JSON-RPC message per frame;
//! the connection's queued lines out, one message per text frame. It shares the daemon's hub
//! and owns the rest — its handshake state, its bounded outbound queue (full means the client
//! cannot keep up, and it is closed with a reason: it never slows the other connections), its
//! dispatcher and its subscriptions, dropped when it goes away.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use crate::config::Config;

use super::super::context::ServerContext;
use super::super::dispatch;
use super::super::hub::Hub;
use super::super::outgoing::{OutgoingSender, QueuedBytes, SOCKET_QUEUE_MESSAGES};
use super::super::stdio::InputLine;

/// What the client reads when it is closed for not keeping up.
const TOO_SLOW: &str = "connection too slow: outbound queue full";

/// Serves an upgraded connection until the client leaves, it falls behind, or `stop` (the
/// daemon stopping) is cancelled.
pub(crate) async fn serve<S>(
    hub: Arc<Hub>,
    config: Config,
    stream: S,
    leftover: Vec<u8>,
    stop: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut ws_config = WebSocketConfig::default();
    ws_config.max_message_size = Some(config.max_line_bytes);
    ws_config.max_frame_size = Some(config.max_line_bytes);
    let ws =
        WebSocketStream::from_partially_read(stream, leftover, Role::Server, Some(ws_config)).await;
    let (sink, mut frames) = ws.split();
    let (lines_tx, lines_rx) = mpsc::channel(SOCKET_QUEUE_MESSAGES);
    let queued = Arc::new(QueuedBytes::default());
    let overflow = CancellationToken::new();
    let gone = CancellationToken::new();
    let finish = CancellationToken::new();
    let context = ServerContext::connect(
        &hub,
        config,
        OutgoingSender::closing_when_full(lines_tx, overflow.clone(), queued.clone()),
    );
    tracing::info!(connection = context.id, "connection opened");
    let writer = tokio::spawn(run_writer(
        sink,
        lines_rx,
        queued,
        overflow.clone(),
        gone.clone(),
        finish.clone(),
    ));
    let (ingress_tx, ingress_rx) = mpsc::channel(context.config.ingress_queue_capacity);
    let dispatcher = tokio::spawn(dispatch::run_dispatcher(context.clone(), ingress_rx));
    loop {
        let frame = tokio::select! {
            frame = frames.next() => frame,
            _ = overflow.cancelled() => break,
            _ = gone.cancelled() => break,
            _ = stop.cancelled() => break,
        };
        let bytes = match frame {
            Some(Ok(Message::Text(text))) => Bytes::from(text),
            Some(Ok(Message::Binary(bytes))) => bytes,
            // Pings are answered by the stream itself.
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Close(_))) | None => break,
            Some(Err(error)) => {
                tracing::info!(connection = context.id, %error, "connection failed");
                break;
            }
        };
        let routing = dispatch::route_input(
            context.clone(),
            InputLine::Line(bytes.to_vec()),
            ingress_tx.clone(),
        );
        tokio::select! {
            _ = routing => {}
            _ = overflow.cancelled() => break,
            _ = gone.cancelled() => break,
        }
    }
    drop(ingress_tx);
    // Requests already queued are answered (or refused on a closed queue) before the
    // connection's subscriptions go.
    if tokio::time::timeout(Duration::from_secs(2), dispatcher)
        .await
        .is_err()
    {
        tracing::warn!(connection = context.id, "dispatcher did not finish in time");
    }
    if stop.is_cancelled() {
        // The daemon is stopping: the turns' last notifications still go out on this
        // connection, until the daemon's shutdown finishes the writers.
        context.lifecycle.writer_finish.cancelled().await;
    }
    crate::server::fanout::disconnect(&context);
    tracing::info!(connection = context.id, "connection closed");
    finish.cancel();
    drop(context);
    let _ = tokio::time::timeout(Duration::from_millis(500), writer).await;
}

/// Writes the connection's queued lines, one text frame per line. Ends when `finish` is
/// cancelled (after what is queued) with a normal close, when the queue overflowed with a
/// close that says so, or when writing fails (cancelling `gone`).
async fn run_writer<Si>(
    mut sink: Si,
    mut lines_rx: mpsc::Receiver<Bytes>,
    queued: Arc<QueuedBytes>,
    overflow: CancellationToken,
    gone: CancellationToken,
    finish: CancellationToken,
) where
    Si: futures::Sink<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin,
{
    let mut burst = Vec::with_capacity(64);
    let close = loop {
        let received = tokio::select! {
            biased;
            _ = overflow.cancelled() => break Some(CloseFrame {
                code: CloseCode::Again,
                reason: TOO_SLOW.into(),
            }),
            received = lines_rx.recv_many(&mut burst, 64) => received,
            _ = finish.cancelled() => {
                lines_rx.close();
                while lines_rx.recv_many(&mut burst, 64).await > 0 {
                    if write_lines(&mut sink, &mut burst).await.is_err() {
                        break;
                    }
                }
                break Some(CloseFrame { code: CloseCode::Normal, reason: "".into() });
            }
        };
        if received == 0 {
            break None;
        }
        let bytes = burst.iter().map(Bytes::len).sum();
        if write_lines(&mut sink, &mut burst).await.is_err() {
            gone.cancel();
            return;
        }
        queued.written(bytes);
    };
    if let Some(frame) = close {
        let _ = sink.send(Message::Close(Some(frame))).await;
    }
    let _ = sink.close().await;
}

/// Feeds every line of the queued messages as its own text frame, then flushes once.
async fn write_lines<Si>(
    sink: &mut Si,
    burst: &mut Vec<Bytes>,
) -> Result<(), tokio_tungstenite::tungstenite::Error>
where
    Si: futures::Sink<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin,
{
    for message in burst.drain(..) {
        let mut rest = message;
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', &rest).unwrap_or(rest.len());
            let line = rest.split_to(end);
            if !rest.is_empty() {
                // The newline itself.
                let _ = rest.split_to(1);
            }
            // Lines are serialized JSON, so always UTF-8; a frame that is not would be refused
            // by the client, so it is skipped instead.
            match tokio_tungstenite::tungstenite::Utf8Bytes::try_from(line) {
                Ok(text) => sink.feed(Message::Text(text)).await?,
                Err(_) => tracing::error!("an outgoing line is not UTF-8; skipped"),
            }
        }
    }
    sink.flush().await
}
