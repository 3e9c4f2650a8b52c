//! One WebSocket connection of a listener: text frames in, one JSON-RPC message per frame;
//! the connection's queued frames out, one message per text frame. tungstenite reads (and
//! frames its own replies: pongs, the close reply, handed to the writer through
//! [`ReadSide`]); the writer writes the frames the fan-out made once for every subscriber
//! ([`crate::server::ws_frames`]) straight to the socket. It shares the daemon's hub
//! and owns the rest — its handshake state, its bounded outbound queue (full means the client
//! cannot keep up, and it is closed with a reason: it never slows the other connections), its
//! dispatcher and its subscriptions, dropped when it goes away.

use std::sync::Arc;
use std::time::Duration;

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::{CancellationToken, PollSender};

use crate::config::Config;

use super::super::context::ServerContext;
use super::super::dispatch;
use super::super::hub::Hub;
use super::super::outgoing::{OutgoingSender, QueuedBytes, SOCKET_QUEUE_MESSAGES};
use super::super::stdio::InputLine;
use super::super::ws_frames;

/// What the client reads when it is closed for not keeping up.
const TOO_SLOW: &str = "connection too slow: outbound queue full";

/// Close codes (RFC 6455 §7.4): a normal close, and "try again later" for a client that fell
/// behind.
const CLOSE_NORMAL: u16 = 1000;
const CLOSE_TRY_AGAIN_LATER: u16 = 1013;

/// How much of a client's input is read at a time; a bigger request is read in several.
const READ_CHUNK_BYTES: usize = 8 * 1024;

/// tungstenite's replies (pongs, the close reply) waiting for the writer; a client that pings
/// faster than this drains waits for them.
const REPLIES_QUEUED: usize = 16;

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
    // What tungstenite reads into at a time (and zeroes before each read): a client sends small
    // requests, and its default (128 KiB) was most of what an idle connection costs.
    ws_config.read_buffer_size = READ_CHUNK_BYTES;
    let (read_half, write_half) = tokio::io::split(stream);
    let (replies_tx, replies_rx) = mpsc::channel(REPLIES_QUEUED);
    let read_side = ReadSide {
        read: read_half,
        replies: PollSender::new(replies_tx),
    };
    let mut frames =
        WebSocketStream::from_partially_read(read_side, leftover, Role::Server, Some(ws_config))
            .await;
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
        write_half,
        lines_rx,
        replies_rx,
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
            Some(Ok(Message::Close(_))) => {
                // tungstenite queued the close reply; flushing hands it to the writer.
                let _ = frames.flush().await;
                break;
            }
            None => break,
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
    crate::server::unload::disconnect(&context);
    tracing::info!(connection = context.id, "connection closed");
    finish.cancel();
    drop(context);
    let _ = tokio::time::timeout(Duration::from_millis(500), writer).await;
}

/// Writes the connection's queued frames and tungstenite's replies. Ends when `finish` is
/// cancelled (after what is queued) with a normal close, when the queue overflowed with a
/// close that says so, when the client's close was answered, or when writing fails
/// (cancelling `gone`).
async fn run_writer<W>(
    mut socket: W,
    mut frames_rx: mpsc::Receiver<Bytes>,
    mut replies_rx: mpsc::Receiver<Bytes>,
    queued: Arc<QueuedBytes>,
    overflow: CancellationToken,
    gone: CancellationToken,
    finish: CancellationToken,
) where
    W: AsyncWrite + Unpin,
{
    let mut burst = Vec::with_capacity(64);
    // Once a close frame went out (ours or the reply to the client's), nothing more may.
    let mut closed = false;
    let mut replies_open = true;
    let close = loop {
        tokio::select! {
            biased;
            _ = overflow.cancelled() => {
                break Some(ws_frames::close_frame(CLOSE_TRY_AGAIN_LATER, TOO_SLOW));
            }
            reply = replies_rx.recv(), if replies_open => {
                let Some(reply) = reply else {
                    // The reading side is gone; what it queued was written.
                    replies_open = false;
                    continue;
                };
                closed = ws_frames::is_close(&reply);
                if socket.write_all(&reply).await.is_err() || socket.flush().await.is_err() {
                    gone.cancel();
                    return;
                }
                if closed {
                    break None;
                }
            }
            received = frames_rx.recv_many(&mut burst, 64) => {
                if received == 0 {
                    break None;
                }
                let bytes = burst.iter().map(Bytes::len).sum();
                if write_frames(&mut socket, &mut burst).await.is_err() {
                    gone.cancel();
                    return;
                }
                queued.written(bytes);
            }
            _ = finish.cancelled() => {
                frames_rx.close();
                while frames_rx.recv_many(&mut burst, 64).await > 0 {
                    if write_frames(&mut socket, &mut burst).await.is_err() {
                        break;
                    }
                }
                break Some(ws_frames::close_frame(CLOSE_NORMAL, ""));
            }
        }
    };
    if let Some(frame) = close.filter(|_| !closed) {
        let _ = socket.write_all(&frame).await;
    }
    let _ = socket.flush().await;
    let _ = socket.shutdown().await;
}

/// Writes queued frames, then flushes once.
async fn write_frames<W>(socket: &mut W, burst: &mut Vec<Bytes>) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    for frames in burst.drain(..) {
        socket.write_all(&frames).await?;
    }
    socket.flush().await
}

/// The side of the socket tungstenite sees: it reads from the socket, and what it writes
/// (complete frames: pongs, the reply to a close) goes to the writer, which owns the socket's
/// write half, so its replies and the connection's frames never interleave mid-frame.
struct ReadSide<R> {
    read: R,
    replies: PollSender<Bytes>,
}

impl<R: AsyncRead + Unpin> AsyncRead for ReadSide<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.read).poll_read(cx, buf)
    }
}

impl<R: Unpin> AsyncWrite for ReadSide<R> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let gone = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        match self.replies.poll_reserve(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(_)) => Poll::Ready(Err(gone())),
            Poll::Ready(Ok(())) => match self.replies.send_item(Bytes::copy_from_slice(buf)) {
                Ok(()) => Poll::Ready(Ok(buf.len())),
                Err(_) => Poll::Ready(Err(gone())),
            },
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
