//! What the mock provider answers: the [`Script`] of replies and the
//! transcript file format that stores one on disk.
//!
//! This module owns plain data and its loading; it knows nothing about
//! sockets. A script is a queue of [`Reply`] values taken in order, one per
//! `POST …/responses` request, then an optional [`Responder`] that computes a
//! reply from each further request (the `demo` provider answers this way), then
//! an optional reply served once the queue is empty.
//!
//! # Transcript files
//!
//! [`Script::from_file`] and [`Script::from_json_str`] read this JSON shape:
//!
//! ```json
//! {
//!   "replies": [
//!     {
//!       "headers": { "openai-model": "gpt-5-mini", "x-request-id": "req_1" },
//!       "events": [
//!         { "type": "response.created", "response": { "id": "resp_1" } },
//!         { "type": "response.output_text.delta", "item_id": "msg_1", "delta": "Hi" },
//!         "[DONE]"
//!       ],
//!       "chunking": "per_event",
//!       "pace_ms": 5,
//!       "fault": { "after_bytes": 120, "kind": "cut" },
//!       "hold_open_after_end": false,
//!       "stamp_send_time": false
//!     },
//!     { "status": 429, "headers": { "retry-after": "1" }, "body": "{\"error\":{}}" }
//!   ],
//!   "when_exhausted": { "status": 500, "body": "no more replies" }
//! }
//! ```
//!
//! - A reply with `"events"` is an SSE reply ([`Reply::Sse`]); a reply with
//!   `"status"` is a plain reply ([`Reply::Status`]). Unknown fields are errors,
//!   so a typo does not silently change a test.
//! - An event object must carry a string `"type"`, which becomes the SSE
//!   `event:` line; the object, serialized compactly, is the `data:` line. When
//!   the object has no `"sequence_number"`, one is added: the event's position
//!   within its reply, counting from 0. An event given as a JSON string is sent
//!   as raw data with no `event:` line (for `[DONE]` or deliberately broken JSON).
//! - `chunking` is `"per_event"` (default), `"whole"` or `{"fixed_bytes": N}`.
//! - `fault.kind` is `"cut"` or `"stall"`; see [`SseReply::fault`].
//! - Every field except `events` / `status` is optional; `body` defaults to "".

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::recorded::RecordedRequest;

/// The replies a [`super::MockProvider`] serves, in order.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Taken front to back, one per `POST …/responses` request.
    pub replies: VecDeque<Reply>,
    /// Asked for each request once `replies` is empty: a reply computed from
    /// what the request carries.
    pub responder: Option<Responder>,
    /// Served (again and again) once `replies` is empty and there is no
    /// responder. `None` answers 500 with a JSON error body, which makes an
    /// unexpected extra request visible.
    pub when_exhausted: Option<Reply>,
}

/// Computes the reply to a request from the request itself, for answers no
/// script can list in advance (they depend on what the user typed, or on the
/// tool output a follow-up request carries).
#[derive(Clone)]
pub struct Responder(Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>);

impl Responder {
    /// Wraps `answer`, which is called once per request, on the connection's task.
    pub fn new(answer: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> Responder {
        Responder(Arc::new(answer))
    }

    /// The reply to `request`.
    pub fn reply(&self, request: &RecordedRequest) -> Reply {
        (self.0)(request)
    }
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder(..)")
    }
}

impl Script {
    /// A script serving `replies` in order, then 500s.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Script {
        Script {
            replies: replies.into_iter().collect(),
            responder: None,
            when_exhausted: None,
        }
    }

    /// A script that answers every request with `responder`.
    pub fn answering(responder: Responder) -> Script {
        Script {
            responder: Some(responder),
            ..Script::default()
        }
    }

    /// Sets the reply served once the queue is empty.
    pub fn with_when_exhausted(mut self, reply: Reply) -> Script {
        self.when_exhausted = Some(reply);
        self
    }

    /// Loads a transcript file (format in the module docs).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Script, ScriptError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Script::from_json_str(&text)
    }

    /// Parses a transcript (format in the module docs).
    pub fn from_json_str(text: &str) -> Result<Script, ScriptError> {
        let file: TranscriptFile = serde_json::from_str(text)?;
        let replies = file
            .replies
            .into_iter()
            .enumerate()
            .map(|(index, reply)| reply_from_json(reply, &format!("replies[{index}]")))
            .collect::<Result<VecDeque<_>, _>>()?;
        let when_exhausted = file
            .when_exhausted
            .map(|reply| reply_from_json(reply, "when_exhausted"))
            .transpose()?;
        Ok(Script {
            replies,
            responder: None,
            when_exhausted,
        })
    }
}

/// Why a transcript could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read transcript {path}: {source}")]
    Read {
        /// The transcript path given to [`Script::from_file`].
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// The text is not JSON, or its top level is not `{"replies": [...]}`.
    #[error("transcript is not a JSON object with a \"replies\" array: {0}")]
    Json(#[from] serde_json::Error),
    /// A reply has a field of the wrong type or an unknown field.
    #[error("{at}: {source}")]
    ReplyShape {
        /// Where, e.g. `replies[2]`.
        at: String,
        /// What serde reported.
        #[source]
        source: serde_json::Error,
    },
    /// A reply or event breaks a rule of the format.
    #[error("{at}: {message}")]
    Invalid {
        /// Where, e.g. `replies[0].events[3]`.
        at: String,
        /// Which rule.
        message: String,
    },
}

/// One answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// 200 `text/event-stream`, chunked.
    Sse(SseReply),
    /// Any status with a body (e.g. 429 with `Retry-After`, 500, 401), sent
    /// with `Content-Length`.
    Status {
        /// The HTTP status code.
        status: u16,
        /// Extra headers, e.g. `("retry-after", "1")`. Without a
        /// `content-type`, one is chosen: JSON if the body parses as JSON,
        /// else plain text.
        headers: Vec<(String, String)>,
        /// The body, sent as is.
        body: String,
    },
}

impl Reply {
    /// An SSE reply with default settings.
    pub fn sse(events: Vec<SseEvent>) -> Reply {
        Reply::Sse(SseReply::new(events))
    }

    /// A plain reply without extra headers.
    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

impl From<SseReply> for Reply {
    fn from(reply: SseReply) -> Reply {
        Reply::Sse(reply)
    }
}

/// A streamed 200 reply and the ways its delivery can be shaped or broken.
#[derive(Debug, Clone, PartialEq)]
pub struct SseReply {
    /// Extra response headers, e.g. `("openai-model", "gpt-5-mini")`. A
    /// `content-type` here replaces the default `text/event-stream`;
    /// `content-length` and `transfer-encoding` are ignored.
    pub headers: Vec<(String, String)>,
    /// The events, in order.
    pub events: Vec<SseEvent>,
    /// How the body bytes are cut into HTTP chunks.
    pub chunking: Chunking,
    /// Delay between events (pacing), e.g. 5ms for 200 events/s. Events are
    /// scheduled against the start of the body so pacing does not drift.
    pub pace: Option<Duration>,
    /// After writing this many bytes of the SSE body (chunk framing not
    /// counted), stop: [`Fault::Cut`] closes the connection abruptly,
    /// [`Fault::Stall`] keeps it open and sends nothing more until the client
    /// hangs up or the server shuts down. If the body is shorter, the fault
    /// happens after the last event instead of the normal end.
    pub fault: Option<(usize, Fault)>,
    /// After the last event, keep the body open forever instead of ending it,
    /// to test that the client finishes on `response.completed` without
    /// waiting for EOF.
    pub hold_open_after_end: bool,
    /// Adds `"sent_at_us": <unix micros at write time>` to every
    /// `response.output_text.delta` event, and replaces
    /// [`super::SENT_AT_US_PLACEHOLDER`] in its data with the same number, so
    /// a benchmark can measure latency (see [`super::stamped_deltas`]).
    pub stamp_send_time: bool,
    /// Replaces the `usage` of `response.completed` with a count of the
    /// request it answers, as a provider's tokenizer would report it: input
    /// tokens = the request body's bytes / 4 (rounded up), output tokens = the
    /// bytes of the reply's output items (as JSON) / 4, total = their sum. Lets a test script replies whose usage
    /// follows the context the client really sent. HTTP requests only (a
    /// WebSocket reply keeps its scripted usage).
    pub count_request_usage: bool,
}

impl Default for SseReply {
    fn default() -> Self {
        SseReply::new(Vec::new())
    }
}

impl SseReply {
    /// Sends `events` one chunk per event, unpaced, then ends the body.
    pub fn new(events: Vec<SseEvent>) -> SseReply {
        SseReply {
            headers: Vec::new(),
            events,
            chunking: Chunking::PerEvent,
            pace: None,
            fault: None,
            hold_open_after_end: false,
            stamp_send_time: false,
            count_request_usage: false,
        }
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> SseReply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets [`SseReply::chunking`].
    pub fn with_chunking(mut self, chunking: Chunking) -> SseReply {
        self.chunking = chunking;
        self
    }

    /// Sets [`SseReply::pace`].
    pub fn with_pace(mut self, pace: Duration) -> SseReply {
        self.pace = Some(pace);
        self
    }

    /// Sets [`SseReply::fault`].
    pub fn with_fault(mut self, after_bytes: usize, fault: Fault) -> SseReply {
        self.fault = Some((after_bytes, fault));
        self
    }

    /// Sets [`SseReply::hold_open_after_end`].
    pub fn held_open_after_end(mut self) -> SseReply {
        self.hold_open_after_end = true;
        self
    }

    /// Sets [`SseReply::stamp_send_time`].
    pub fn with_send_time_stamps(mut self) -> SseReply {
        self.stamp_send_time = true;
        self
    }

    /// Sets [`SseReply::count_request_usage`].
    pub fn with_usage_counted_from_request(mut self) -> SseReply {
        self.count_request_usage = true;
        self
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` line. `None` means "the data's JSON `type` field", and no
    /// `event:` line at all when the data has none.
    pub event: Option<String>,
    /// Raw data, usually JSON, but anything goes (`[DONE]`, broken JSON).
    /// Each line of it becomes one `data:` line.
    pub data: String,
}

impl SseEvent {
    /// An event whose `event:` line is the value's `type` field.
    pub fn json(value: &Value) -> SseEvent {
        let event = value.get("type").and_then(Value::as_str).map(str::to_owned);
        SseEvent {
            event,
            data: value.to_string(),
        }
    }

    /// Raw data with no `event:` line unless the data is JSON with a `type`.
    pub fn raw(data: impl Into<String>) -> SseEvent {
        SseEvent {
            event: None,
            data: data.into(),
        }
    }

    /// The name written on the `event:` line, if any.
    pub fn event_name(&self) -> Option<std::borrow::Cow<'_, str>> {
        if let Some(event) = &self.event {
            return Some(std::borrow::Cow::Borrowed(event.as_str()));
        }
        let value: Value = serde_json::from_str(&self.data).ok()?;
        value
            .get("type")
            .and_then(Value::as_str)
            .map(|name| std::borrow::Cow::Owned(name.to_owned()))
    }
}

/// How an SSE body is cut into HTTP chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Chunking {
    /// One chunk per event.
    #[default]
    PerEvent,
    /// Chunks of exactly N body bytes (the last may be shorter), regardless of
    /// event boundaries; N = 0 is treated as 1.
    FixedBytes(usize),
    /// The whole body in one chunk, written after the last event is ready.
    Whole,
}

/// How an SSE body breaks, see [`SseReply::fault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Close the connection without ending the chunked body.
    Cut,
    /// Keep the connection open and send nothing more.
    Stall,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptFile {
    replies: Vec<Value>,
    #[serde(default)]
    when_exhausted: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptSse {
    #[serde(default)]
    headers: BTreeMap<String, String>,
    events: Vec<Value>,
    #[serde(default)]
    chunking: Chunking,
    #[serde(default)]
    pace_ms: Option<u64>,
    #[serde(default)]
    fault: Option<TranscriptFault>,
    #[serde(default)]
    hold_open_after_end: bool,
    #[serde(default)]
    stamp_send_time: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptFault {
    after_bytes: usize,
    kind: Fault,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptStatus {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: String,
}

fn reply_from_json(value: Value, at: &str) -> Result<Reply, ScriptError> {
    let shape_error = |source| ScriptError::ReplyShape {
        at: at.to_owned(),
        source,
    };
    let is_sse = value.get("events").is_some();
    if !is_sse && value.get("status").is_none() {
        let message = "a reply needs \"events\" (SSE) or \"status\"".to_owned();
        return Err(ScriptError::Invalid {
            at: at.to_owned(),
            message,
        });
    }
    if !is_sse {
        let status: TranscriptStatus = serde_json::from_value(value).map_err(shape_error)?;
        let headers = status.headers.into_iter().collect();
        return Ok(Reply::Status {
            status: status.status,
            headers,
            body: status.body,
        });
    }
    let sse: TranscriptSse = serde_json::from_value(value).map_err(shape_error)?;
    let events = sse
        .events
        .into_iter()
        .enumerate()
        .map(|(index, event)| event_from_json(event, index, &format!("{at}.events[{index}]")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Reply::Sse(SseReply {
        headers: sse.headers.into_iter().collect(),
        events,
        chunking: sse.chunking,
        pace: sse.pace_ms.map(Duration::from_millis),
        fault: sse.fault.map(|fault| (fault.after_bytes, fault.kind)),
        hold_open_after_end: sse.hold_open_after_end,
        stamp_send_time: sse.stamp_send_time,
        // Not part of the transcript format: transcripts replay recorded usage as it was.
        count_request_usage: false,
    }))
}

fn event_from_json(value: Value, index: usize, at: &str) -> Result<SseEvent, ScriptError> {
    let invalid = |message: &str| ScriptError::Invalid {
        at: at.to_owned(),
        message: message.to_owned(),
    };
    let mut object: Map<String, Value> = match value {
        Value::String(raw) => return Ok(SseEvent::raw(raw)),
        Value::Object(object) => object,
        _ => {
            return Err(invalid(
                "an event is a JSON object with \"type\", or a raw string",
            ))
        }
    };
    let Some(event_type) = object
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return Err(invalid("event object has no string \"type\""));
    };
    object
        .entry("sequence_number")
        .or_insert_with(|| Value::from(index));
    Ok(SseEvent {
        event: Some(event_type),
        data: Value::Object(object).to_string(),
    })
}
