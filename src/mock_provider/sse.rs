//! Writes an [`SseReply`]'s body onto the wire: SSE text formatting, cutting
//! the bytes into HTTP chunks, pacing, send-time stamps and injected faults.
//!
//! This module owns the body only. The response head, hang-up detection and
//! shutdown belong to `server.rs`, which races [`write_sse_body`] against
//! them; a body that stalls or is held open therefore simply never finishes.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use super::http::{encode_chunk, LAST_CHUNK};
use super::script::{Chunking, Fault, SseEvent, SseReply};

const STAMPED_EVENT: &str = "response.output_text.delta";

/// In a stamped event's data (see [`SseReply::stamp_send_time`]), this text
/// is replaced by the send time in Unix microseconds.
pub const SENT_AT_US_PLACEHOLDER: &str = "@SENT_AT_US@";

/// How a body that finished on its own ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyEnd {
    /// The terminating chunk was written; the connection can be reused.
    Completed,
    /// [`Fault::Cut`] fired; the caller must close the connection.
    Cut,
    /// A write failed: the client hung up.
    ClientGone,
}

/// Why chunk emission stopped early.
enum Stop {
    Fault(Fault),
    ClientGone,
}

/// For a reply with [`SseReply::count_request_usage`]: the reply with the
/// usage of its `response.completed` events counted from the request's
/// `request_bytes` and the reply's own output items.
pub(super) fn with_counted_usage(mut reply: SseReply, request_bytes: usize) -> SseReply {
    let count = |bytes: usize| u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX);
    let input = count(request_bytes);
    let output_bytes: usize = reply
        .events
        .iter()
        .filter_map(|event| serde_json::from_str::<serde_json::Value>(&event.data).ok())
        .filter(|data| data["type"] == "response.output_item.done")
        .map(|data| data["item"].to_string().len())
        .sum();
    let output = count(output_bytes);
    for event in &mut reply.events {
        let Ok(mut data) = serde_json::from_str::<serde_json::Value>(&event.data) else {
            continue;
        };
        if data["type"] != "response.completed" {
            continue;
        }
        let Some(usage) = data
            .pointer_mut("/response/usage")
            .and_then(serde_json::Value::as_object_mut)
        else {
            continue;
        };
        usage.insert("input_tokens".to_owned(), input.into());
        usage.insert("output_tokens".to_owned(), output.into());
        usage.insert(
            "total_tokens".to_owned(),
            input.saturating_add(output).into(),
        );
        event.data = data.to_string();
    }
    reply
}

/// Writes the body of `reply` (the head is already sent). Never returns for a
/// stalled or held-open body; the caller races it against hang-up and shutdown.
pub(super) async fn write_sse_body<W>(writer: &mut W, reply: &SseReply) -> BodyEnd
where
    W: AsyncWrite + Unpin,
{
    let mut chunker = Chunker {
        writer,
        chunking: reply.chunking,
        pending: Vec::new(),
        fault: reply.fault,
    };
    let outcome = match chunker.check_fault_at_start() {
        Err(stop) => Err(stop),
        Ok(()) => write_events(&mut chunker, reply).await,
    };
    match outcome {
        Ok(()) => {}
        Err(Stop::ClientGone) => return BodyEnd::ClientGone,
        Err(Stop::Fault(Fault::Cut)) => return BodyEnd::Cut,
        Err(Stop::Fault(Fault::Stall)) => return std::future::pending().await,
    }
    if reply.hold_open_after_end {
        return std::future::pending().await;
    }
    match chunker.writer.write_all(LAST_CHUNK).await {
        Ok(()) => BodyEnd::Completed,
        Err(_) => BodyEnd::ClientGone,
    }
}

async fn write_events<W>(chunker: &mut Chunker<'_, W>, reply: &SseReply) -> Result<(), Stop>
where
    W: AsyncWrite + Unpin,
{
    let start = Instant::now();
    let mut formatted = Vec::new();
    for (index, event) in reply.events.iter().enumerate() {
        if let Some(pace) = reply.pace.filter(|_| index > 0) {
            // Scheduling against `start` keeps the average rate exact even
            // when a single sleep overshoots.
            let offset = pace.saturating_mul(u32::try_from(index).unwrap_or(u32::MAX));
            tokio::time::sleep_until(start + offset).await;
        }
        formatted.clear();
        format_event(event, reply.stamp_send_time, &mut formatted);
        chunker.push(&formatted).await?;
    }
    chunker.flush().await?;
    // A fault placed beyond the end of the body fires here, instead of the
    // normal end, so "stall after everything" is expressible.
    match chunker.fault {
        Some((_, fault)) => Err(Stop::Fault(fault)),
        None => Ok(()),
    }
}

/// Appends one event in SSE text form: an `event:` line when the event has a
/// name, one `data:` line per line of data, and a blank line.
pub(super) fn format_event(event: &SseEvent, stamp_send_time: bool, out: &mut Vec<u8>) {
    let name = event.event_name();
    if let Some(name) = &name {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    let stamped;
    let data = if stamp_send_time && name.as_deref() == Some(STAMPED_EVENT) {
        stamped = stamp(&event.data, unix_micros());
        stamped.as_str()
    } else {
        event.data.as_str()
    };
    for line in data.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.strip_suffix('\r').unwrap_or(line).as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// Replaces every [`SENT_AT_US_PLACEHOLDER`] with `micros` and inserts
/// `"sent_at_us"` into a JSON object, both by splicing text, which keeps the
/// stamp as close to the write as possible. The placeholder exists because a
/// daemon forwards a delta's text to its client but not the event's other
/// fields, so a latency probe on the far side needs the stamp inside the text.
/// Non-objects get no field.
pub(super) fn stamp(data: &str, micros: u128) -> String {
    let replaced;
    let data = if data.contains(SENT_AT_US_PLACEHOLDER) {
        replaced = data.replace(SENT_AT_US_PLACEHOLDER, &micros.to_string());
        replaced.as_str()
    } else {
        data
    };
    let trimmed = data.trim_end();
    let Some(without_brace) = trimmed.strip_suffix('}') else {
        return data.to_owned();
    };
    if !trimmed.trim_start().starts_with('{') {
        return data.to_owned();
    }
    let separator = if without_brace.trim_end().ends_with('{') {
        ""
    } else {
        ","
    };
    format!("{without_brace}{separator}\"sent_at_us\":{micros}}}")
}

fn unix_micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_micros())
        .unwrap_or(0)
}

/// Cuts body bytes into chunks per [`Chunking`] and enforces the fault budget.
struct Chunker<'a, W> {
    writer: &'a mut W,
    chunking: Chunking,
    /// Bytes accepted but not yet written (fixed-size and whole chunking).
    pending: Vec<u8>,
    /// Body bytes still allowed before the fault fires, and which fault.
    fault: Option<(usize, Fault)>,
}

impl<W> Chunker<'_, W>
where
    W: AsyncWrite + Unpin,
{
    fn check_fault_at_start(&self) -> Result<(), Stop> {
        match self.fault {
            Some((0, fault)) => Err(Stop::Fault(fault)),
            _ => Ok(()),
        }
    }

    async fn push(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        match self.chunking {
            Chunking::PerEvent => self.emit(bytes).await,
            Chunking::Whole => {
                self.pending.extend_from_slice(bytes);
                Ok(())
            }
            Chunking::FixedBytes(size) => {
                let size = size.max(1);
                self.pending.extend_from_slice(bytes);
                let full = self.pending.len() - self.pending.len() % size;
                let ready: Vec<u8> = self.pending.drain(..full).collect();
                for chunk in ready.chunks(size) {
                    self.emit(chunk).await?;
                }
                Ok(())
            }
        }
    }

    async fn flush(&mut self) -> Result<(), Stop> {
        let rest = std::mem::take(&mut self.pending);
        self.emit(&rest).await
    }

    /// Writes one chunk, truncated to the fault budget when it runs out.
    async fn emit(&mut self, data: &[u8]) -> Result<(), Stop> {
        if data.is_empty() {
            return Ok(());
        }
        let (data, fault) = match self.fault {
            Some((budget, fault)) if data.len() >= budget => (&data[..budget], Some(fault)),
            Some((budget, fault)) => {
                self.fault = Some((budget - data.len(), fault));
                (data, None)
            }
            None => (data, None),
        };
        let mut framed = Vec::with_capacity(data.len() + 16);
        encode_chunk(data, &mut framed);
        if !framed.is_empty() && self.writer.write_all(&framed).await.is_err() {
            return Err(Stop::ClientGone);
        }
        match fault {
            Some(fault) => Err(Stop::Fault(fault)),
            None => Ok(()),
        }
    }
}
