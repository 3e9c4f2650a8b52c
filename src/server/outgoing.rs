//! The outbound side of a connection: every message is serialized by its producer and queued as
//! one line, or as a burst of lines (a turn's projection queues what one round of core events
//! produced); exactly one task (see [`super::stdio`]) writes them to stdout.
//!
//! The queue is bounded. A client that stops reading stdout fills it, and producers (turns, via
//! their projection tasks) wait: nothing is dropped and memory stays bounded.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::protocol::jsonrpc::{
    ErrorEnvelope, ErrorObject, NotificationEnvelope, RequestId, ResponseEnvelope,
    ServerRequestEnvelope, JSONRPC_VERSION,
};
use crate::protocol::notification::ServerNotification;

/// Messages queued for stdout. A message is one line, or a turn's burst of lines (at most about
/// 32 KiB, see `fanout`): enough to absorb bursts between two writer wake-ups, small enough that a
/// stalled client costs at most a few MiB.
pub(crate) const OUTGOING_CAPACITY: usize = 256;

/// The outbound queue ended: the writer stopped (stdout closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the connection's output is closed")]
pub(crate) struct OutputClosed;

/// The right to answer one request. Made once per request id as the request is read, and consumed
/// by its answer: a request cannot be answered twice, and only the code that holds it
/// (`handlers::handle`, or the dispatcher refusing a request before it reaches a handler) can
/// answer at all.
#[must_use = "every request gets exactly one response"]
#[derive(Debug)]
pub(crate) struct Responder {
    id: RequestId,
}

impl Responder {
    pub(super) fn new(id: RequestId) -> Responder {
        Responder { id }
    }

    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }
}

#[derive(Clone)]
pub(crate) struct OutgoingSender {
    lines_tx: mpsc::Sender<Bytes>,
    opted_out: Arc<RwLock<HashSet<String>>>,
    /// Whether `opted_out` has any entry: most connections opt out of nothing, and then no
    /// notification takes the lock.
    any_opted_out: Arc<AtomicBool>,
    /// Set for a WebSocket connection (one of many on a socket), which must never make its
    /// producers wait: a full queue cancels this token, which closes the connection with a
    /// reason, instead of stalling a turn every other connection is watching. Its queue holds
    /// WebSocket frames ([`super::ws_frames`]), not lines. `None` on stdio, whose one client
    /// slows its own turns down and loses nothing.
    overflow: Option<Overflow>,
}

/// Messages a socket connection may have queued. Bytes, not messages, are what a client that
/// falls behind costs, so [`SOCKET_QUEUE_BYTES`] is the bound that closes it; this count only
/// keeps the channel finite when a burst of tiny messages comes in.
pub(crate) const SOCKET_QUEUE_MESSAGES: usize = 16 * 1024;

/// Bytes a socket connection may have queued before it is closed as too slow (when it is also
/// [`OUTGOING_CAPACITY`] messages behind): a client that is only a moment behind (a busy
/// machine, a scheduler's pause) stays connected, one that stopped reading costs about this much.
pub(crate) const SOCKET_QUEUE_BYTES: usize = 8 * 1024 * 1024;

/// How many bytes of a socket connection wait for its writer: added as a message is queued,
/// taken back by the writer once the message is written.
#[derive(Debug, Default)]
pub(crate) struct QueuedBytes(AtomicUsize);

impl QueuedBytes {
    /// The writer wrote `bytes` of what was queued.
    pub(crate) fn written(&self, bytes: usize) {
        self.0.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// What a socket connection's sender does when its client falls behind: see the field's docs.
#[derive(Debug, Clone)]
struct Overflow {
    token: tokio_util::sync::CancellationToken,
    queued: Arc<QueuedBytes>,
}

impl OutgoingSender {
    pub(crate) fn new(lines_tx: mpsc::Sender<Bytes>) -> OutgoingSender {
        OutgoingSender {
            lines_tx,
            opted_out: Arc::new(RwLock::new(HashSet::new())),
            any_opted_out: Arc::new(AtomicBool::new(false)),
            overflow: None,
        }
    }

    /// A WebSocket connection's sender, which queues frames and never waits: when more than
    /// [`SOCKET_QUEUE_BYTES`] in many messages are already queued (or the channel is full),
    /// `overflow` is cancelled and the message refused (see the field's docs). The writer
    /// reports what it wrote through `queued`.
    pub(crate) fn closing_when_full(
        lines_tx: mpsc::Sender<Bytes>,
        overflow: tokio_util::sync::CancellationToken,
        queued: Arc<QueuedBytes>,
    ) -> OutgoingSender {
        OutgoingSender {
            overflow: Some(Overflow {
                token: overflow,
                queued,
            }),
            ..OutgoingSender::new(lines_tx)
        }
    }

    /// Sets the notification methods this connection opted out of (exact names).
    pub(crate) fn set_opt_outs(&self, methods: impl IntoIterator<Item = String>) {
        if let Ok(mut set) = self.opted_out.write() {
            set.extend(methods);
            self.any_opted_out.store(!set.is_empty(), Ordering::Release);
        }
    }

    /// Whether this connection opted out of any notification method.
    pub(crate) fn opts_out_of_any(&self) -> bool {
        self.any_opted_out.load(Ordering::Acquire)
    }

    pub(crate) fn is_opted_out(&self, method: &str) -> bool {
        if !self.any_opted_out.load(Ordering::Acquire) {
            return false;
        }
        self.opted_out
            .read()
            .map(|set| !set.is_empty() && set.contains(method))
            .unwrap_or(false)
    }

    /// Answers a request with its result.
    pub(crate) async fn send_response<T: Serialize>(
        &self,
        to: Responder,
        result: &T,
    ) -> Result<(), OutputClosed> {
        self.send_value(&ResponseEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id: &to.id,
            result,
        })
        .await
    }

    /// Answers a request with an error.
    pub(crate) async fn send_error(
        &self,
        to: Responder,
        error: &ErrorObject,
    ) -> Result<(), OutputClosed> {
        self.send_value(&ErrorEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id: Some(&to.id),
            error,
        })
        .await
    }

    /// An error about a line that carries no usable request id (not JSON, too long, not a
    /// request object): sent with `"id": null`.
    pub(crate) async fn send_error_without_id(
        &self,
        error: &ErrorObject,
    ) -> Result<(), OutputClosed> {
        self.send_value(&ErrorEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id: None,
            error,
        })
        .await
    }

    pub(crate) async fn send_notification(
        &self,
        notification: &ServerNotification,
    ) -> Result<(), OutputClosed> {
        let mut lines = Vec::with_capacity(256);
        self.encode_notification(
            notification,
            chrono::Utc::now().timestamp_millis(),
            &mut lines,
        );
        self.send_lines(lines).await
    }

    /// Appends `notification` as one line to `lines`, unless the client opted out of its method.
    /// Producers of many notifications (a turn's projection) encode a burst into one buffer and
    /// queue it with [`OutgoingSender::send_lines`]: one hand-off to the writer per burst.
    pub(crate) fn encode_notification(
        &self,
        notification: &ServerNotification,
        emitted_at_ms: i64,
        lines: &mut Vec<u8>,
    ) {
        self.encode_notification_as(notification.method(), notification, emitted_at_ms, lines);
    }

    /// [`OutgoingSender::encode_notification`] for any value that serializes as a notification
    /// with `method` (`{"method": …, "params": …}`): the hot path encodes deltas from borrowed
    /// fields without building a [`ServerNotification`].
    pub(crate) fn encode_notification_as<T: Serialize>(
        &self,
        method: &str,
        notification: &T,
        emitted_at_ms: i64,
        lines: &mut Vec<u8>,
    ) {
        if self.is_opted_out(method) {
            return;
        }
        let envelope = NotificationEnvelope {
            jsonrpc: JSONRPC_VERSION,
            notification,
            emitted_at_ms,
        };
        if let Err(error) = encode_line_into(&envelope, lines) {
            tracing::error!(%error, "outgoing notification could not be serialized");
        }
    }

    /// Queues complete lines (each ending in `\n`) as one message; nothing to do when empty.
    pub(crate) async fn send_lines(&self, lines: Vec<u8>) -> Result<(), OutputClosed> {
        self.send_bytes(Bytes::from(lines)).await
    }

    /// [`OutgoingSender::send_lines`] for lines already in a [`Bytes`].
    pub(crate) async fn send_bytes(&self, lines: Bytes) -> Result<(), OutputClosed> {
        if lines.is_empty() {
            return Ok(());
        }
        self.queue(lines).await
    }

    /// Whether this is a WebSocket connection's sender, whose queue takes frames: the fan-out
    /// frames a round once for all of them ([`OutgoingSender::queue_frames`]).
    pub(crate) fn takes_frames(&self) -> bool {
        self.overflow.is_some()
    }

    /// Queues what [`super::ws_frames::frame_lines`] made of a round on a WebSocket
    /// connection's sender (see [`OutgoingSender::takes_frames`]); never waits.
    pub(crate) fn queue_frames(&self, frames: Bytes) -> Result<(), OutputClosed> {
        match &self.overflow {
            Some(overflow) if !frames.is_empty() => self.queue_or_close(overflow, frames),
            Some(_) => Ok(()),
            None => Err(OutputClosed),
        }
    }

    async fn queue(&self, message: Bytes) -> Result<(), OutputClosed> {
        match &self.overflow {
            Some(overflow) => {
                self.queue_or_close(overflow, super::ws_frames::frame_lines(&message))
            }
            None => self.lines_tx.send(message).await.map_err(|_| OutputClosed),
        }
    }

    /// A socket connection's queueing: never waits; closes the connection when it is behind.
    fn queue_or_close(&self, overflow: &Overflow, message: Bytes) -> Result<(), OutputClosed> {
        let len = message.len();
        let before = overflow.queued.0.fetch_add(len, Ordering::AcqRel);
        // Behind means behind by both measures: many bytes (a stalled reader's cost) and many
        // messages (a completed item carrying a whole answer may alone be larger than the byte
        // budget, and a client that is one such message behind is not slow).
        let waiting = self.lines_tx.max_capacity() - self.lines_tx.capacity();
        let sent = if before > SOCKET_QUEUE_BYTES && waiting >= OUTGOING_CAPACITY {
            Err(None)
        } else {
            self.lines_tx
                .try_send(message)
                .map_err(|error| match error {
                    mpsc::error::TrySendError::Full(_) => None,
                    mpsc::error::TrySendError::Closed(_) => Some(OutputClosed),
                })
        };
        match sent {
            Ok(()) => Ok(()),
            Err(closed) => {
                overflow.queued.written(len);
                if closed.is_none() && !overflow.token.is_cancelled() {
                    tracing::warn!("a connection's outbound queue is full; closing it");
                    overflow.token.cancel();
                }
                Err(OutputClosed)
            }
        }
    }

    pub(crate) async fn send_request<T: Serialize>(
        &self,
        id: &RequestId,
        request: &T,
    ) -> Result<(), OutputClosed> {
        self.send_value(&ServerRequestEnvelope {
            jsonrpc: JSONRPC_VERSION,
            id,
            request,
        })
        .await
    }

    async fn send_value<T: Serialize>(&self, value: &T) -> Result<(), OutputClosed> {
        let line = match encode_line(value) {
            Ok(line) => line,
            Err(error) => {
                tracing::error!(%error, "outgoing message could not be serialized");
                return Ok(());
            }
        };
        self.queue(line).await
    }
}

/// Serializes one message as a JSON line, with U+2028 and U+2029 escaped: some line readers
/// treat them as line breaks. They can only occur inside JSON strings, where `\u2028` is an
/// equivalent spelling, so a byte-level replacement is exact.
pub(crate) fn encode_line<T: Serialize>(value: &T) -> Result<Bytes, serde_json::Error> {
    // Most lines are small deltas; starting at 256 bytes skips the five or six reallocations an
    // empty Vec would go through on the way there.
    let mut bytes = Vec::with_capacity(256);
    encode_line_into(value, &mut bytes)?;
    Ok(Bytes::from(bytes))
}

/// [`encode_line`], appending to `out`. On error `out` is left as it was.
pub(crate) fn encode_line_into<T: Serialize>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    if let Err(error) = serde_json::to_writer(&mut *out, value) {
        out.truncate(start);
        return Err(error);
    }
    finish_line(out, start);
    Ok(())
}

/// Escapes U+2028 and U+2029 in the line that begins at `start` and ends it with `\n`.
fn finish_line(out: &mut Vec<u8>, start: usize) {
    // `contains` on bytes is a word-at-a-time search, so the common line without any U+2000..
    // character costs one fast scan; the exact check runs only when 0xE2 occurs.
    let line = &out[start..];
    if line.contains(&0xE2)
        && line
            .windows(3)
            .any(|w| w == [0xE2, 0x80, 0xA8] || w == [0xE2, 0x80, 0xA9])
    {
        let escaped = escape_line_separators(line);
        out.truncate(start);
        out.extend_from_slice(&escaped);
    }
    out.push(b'\n');
}

/// The method of an agent message delta notification.
pub(crate) const AGENT_MESSAGE_DELTA_METHOD: &str = "item/agentMessage/delta";

/// The fields of an `item/agentMessage/delta` notification, borrowed from core's event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentMessageDelta<'a> {
    pub thread_id: &'a str,
    pub turn_id: &'a str,
    pub item_id: &'a str,
    pub delta: &'a str,
}

/// Writes the delta's notification line into `out`: most of a turn's traffic, written from the
/// event's borrowed fields with no notification value, no envelope and no `flatten` round-trip,
/// byte for byte what [`OutgoingSender::encode_notification`] writes for the same notification
/// (a test in `projection.rs` holds them equal). On error `out` is left as it was.
pub(crate) fn encode_agent_message_delta_line(
    delta: &AgentMessageDelta<'_>,
    emitted_at_ms: i64,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    let written = write_agent_message_delta(delta, emitted_at_ms, out);
    if written.is_err() {
        out.truncate(start);
        return written;
    }
    finish_line(out, start);
    Ok(())
}

fn write_agent_message_delta(
    delta: &AgentMessageDelta<'_>,
    emitted_at_ms: i64,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    out.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"item/agentMessage/delta\",\"params\":{\"threadId\":",
    );
    write_json_str(delta.thread_id, out)?;
    out.extend_from_slice(b",\"turnId\":");
    write_json_str(delta.turn_id, out)?;
    out.extend_from_slice(b",\"itemId\":");
    write_json_str(delta.item_id, out)?;
    out.extend_from_slice(b",\"delta\":");
    write_json_str(delta.delta, out)?;
    out.extend_from_slice(b"},\"emittedAtMs\":");
    serde_json::to_writer(&mut *out, &emitted_at_ms)?;
    out.push(b'}');
    Ok(())
}

/// `value` as a JSON string. Ids and most deltas contain nothing JSON escapes (control
/// characters, `"`, `\\`): those are copied as they are, after one branch-free scan; the others
/// go through serde_json's escaping, so every string is spelled as everywhere else.
fn write_json_str(value: &str, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let needs_escape = value.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if needs_escape {
        return serde_json::to_writer(&mut *out, value);
    }
    out.reserve(value.len() + 2);
    out.push(b'"');
    out.extend_from_slice(value.as_bytes());
    out.push(b'"');
    Ok(())
}

fn escape_line_separators(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut index = 0;
    while index < bytes.len() {
        match bytes.get(index..index + 3) {
            Some([0xE2, 0x80, 0xA8]) => {
                out.extend_from_slice(b"\\u2028");
                index += 3;
            }
            Some([0xE2, 0x80, 0xA9]) => {
                out.extend_from_slice(b"\\u2029");
                index += 3;
            }
            _ => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_separators_are_escaped_inside_strings() {
        let line = encode_line(&serde_json::json!({"t": "a\u{2028}b\u{2029}c"})).unwrap();
        assert_eq!(&line[..], b"{\"t\":\"a\\u2028b\\u2029c\"}\n");
        let back: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(back["t"], "a\u{2028}b\u{2029}c");
        // Other characters starting with 0xE2 0x80 (an em dash) are left alone.
        let dash = encode_line(&serde_json::json!({"t": "a\u{2014}b"})).unwrap();
        assert_eq!(&dash[..], "{\"t\":\"a\u{2014}b\"}\n".as_bytes());
    }
}
