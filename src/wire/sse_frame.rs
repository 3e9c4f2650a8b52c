//! SSE framing: bytes in arbitrary chunks → whole frames (`event` name + `data`), following the
//! WHATWG event-stream rules. Pure and incremental: no I/O, no async, no knowledge of JSON.
//!
//! Rules implemented: lines end in CRLF, LF or a lone CR (a CR at the end of a chunk waits for
//! the next byte to tell which); a line starting with `:` is a comment; `field: value` drops one
//! space after the colon; a line without a colon is a field with an empty value; several `data`
//! lines join with `\n`; a blank line dispatches the frame if it has data; `id` and `retry` are
//! ignored (nothing reconnects a Responses stream); a leading UTF-8 BOM is dropped; a frame not
//! closed by a blank line before EOF is discarded.
//!
//! A frame is bounded by [`MAX_FRAME_BYTES`]: a provider (or proxy) sending a line that never ends,
//! or data lines with no blank line, would otherwise grow the buffer without limit.
//! [`SseFramer::frame_too_large`] tells the caller to end the stream with an error.
//!
//! Lines split only at CR/LF bytes, which never occur inside a multi-byte UTF-8 sequence, so a
//! character cut by a chunk boundary is whole again by the time its line is decoded. Invalid UTF-8
//! is replaced (U+FFFD) rather than fatal, as the standard says.
//!
//! Written for this crate instead of using eventsource-stream because framing is on the hot path
//! of every streamed token: scanning with `memchr` and keeping a scan position makes framing cost
//! linear in the bytes however they are chunked, several times faster than the generic parser.

/// One dispatched frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    /// The `event:` name; empty when the frame had none.
    pub event: String,
    pub data: String,
}

/// Incremental SSE parser: [`SseFramer::push`] bytes, then take frames with
/// [`SseFramer::next_frame`] until it returns `None`.
#[derive(Debug, Default)]
pub struct SseFramer {
    /// Bytes received; those before `consumed` are parsed already, and those from `consumed` to
    /// `scanned` are known to hold no line end. Consumed bytes are dropped once per `push`, not
    /// per frame, so many small frames in one chunk cost no repeated copying.
    buffer: Vec<u8>,
    consumed: usize,
    scanned: usize,
    /// Whether the stream's first bytes were checked for a BOM.
    bom_checked: bool,
    /// No more bytes will come: a trailing CR ends its line.
    at_eof: bool,
    /// The frame being assembled from its lines.
    event: String,
    data: String,
    has_data: bool,
    /// `event` and `data` hold a frame already handed out by [`SseFramer::next_data`]; they are
    /// cleared (keeping their capacity) before the next frame is assembled.
    dispatched: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The most bytes one frame may hold while incomplete (its unfinished line plus the `data` and
/// `event` gathered so far). Far above any real event, small enough to never exhaust memory.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

impl SseFramer {
    pub fn new() -> SseFramer {
        SseFramer::default()
    }

    /// Appends a chunk of the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.consumed > 0 {
            self.buffer.drain(..self.consumed);
            self.scanned -= self.consumed;
            self.consumed = 0;
        }
        self.buffer.extend_from_slice(chunk);
    }

    /// Marks the end of the stream, so a final lone CR counts as a line end. Frames still open
    /// stay undispatched.
    pub fn finish(&mut self) {
        self.at_eof = true;
        self.bom_checked = true;
    }

    /// Whether the frame being assembled already exceeds [`MAX_FRAME_BYTES`]. Meaningful once
    /// [`SseFramer::next_frame`] returned `None`: then the unparsed bytes are one unfinished line.
    pub fn frame_too_large(&self) -> bool {
        let unparsed = self.buffer.len() - self.consumed;
        unparsed + self.data.len() + self.event.len() > MAX_FRAME_BYTES
    }

    /// The next complete frame from the bytes pushed so far; `None` when more bytes are needed.
    pub fn next_frame(&mut self) -> Option<SseFrame> {
        self.next_data()?;
        self.dispatched = false;
        Some(SseFrame {
            event: std::mem::take(&mut self.event),
            data: std::mem::take(&mut self.data),
        })
    }

    /// [`SseFramer::next_frame`], lending the frame's data instead of giving it away: the
    /// framer's buffers are reused for the next frame, so a stream of small frames (one per
    /// token) allocates nothing here once they have grown.
    pub fn next_data(&mut self) -> Option<&str> {
        if std::mem::take(&mut self.dispatched) {
            self.event.clear();
            self.data.clear();
        }
        if !self.bom_checked {
            if self.buffer.len() < BOM.len() && BOM.starts_with(&self.buffer) {
                return None;
            }
            if self.buffer.starts_with(BOM) {
                self.consumed = BOM.len();
                self.scanned = self.scanned.max(BOM.len());
            }
            self.bom_checked = true;
        }
        // Bounded by the buffer: every iteration consumes at least one byte.
        loop {
            let start = self.consumed;
            let (line_end, next) = self.find_line_end(start)?;
            let dispatched = self.take_line(start, line_end);
            self.consumed = next;
            self.scanned = next;
            if dispatched {
                self.dispatched = true;
                return Some(&self.data);
            }
        }
    }

    /// The end of the line starting at `start` and where the next line starts, if the line is
    /// complete. Remembers how far it scanned, so a long line arriving in many chunks is scanned
    /// once.
    fn find_line_end(&mut self, start: usize) -> Option<(usize, usize)> {
        let from = self.scanned.max(start);
        let Some(offset) = memchr::memchr2(b'\n', b'\r', &self.buffer[from..]) else {
            self.scanned = self.buffer.len();
            return None;
        };
        let end = from + offset;
        if self.buffer[end] == b'\n' {
            return Some((end, end + 1));
        }
        match self.buffer.get(end + 1) {
            Some(b'\n') => Some((end, end + 2)),
            Some(_) => Some((end, end + 1)),
            None if self.at_eof => Some((end, end + 1)),
            // A CR as the last byte: wait to see whether LF follows.
            None => {
                self.scanned = end;
                None
            }
        }
    }

    /// Applies one line; true when it was a blank line that dispatched a frame (left in
    /// `event` and `data`).
    fn take_line(&mut self, start: usize, end: usize) -> bool {
        let line = &self.buffer[start..end];
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return false;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &line[line.len()..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&utf8_lossy(value));
            }
            _ => {}
        }
        false
    }

    /// A blank line: the frame is dispatched when it has data; the event name is reset either
    /// way.
    fn dispatch(&mut self) -> bool {
        if !std::mem::take(&mut self.has_data) {
            self.event.clear();
            return false;
        }
        true
    }
}

/// Decodes a whole byte string into frames; for tests and tools that have everything at once.
pub fn frames_of(bytes: &[u8]) -> Vec<SseFrame> {
    let mut framer = SseFramer::new();
    framer.push(bytes);
    framer.finish();
    std::iter::from_fn(|| framer.next_frame()).collect()
}

/// `value` as text, invalid sequences replaced by U+FFFD. Valid input (nearly all of it) takes
/// `str::from_utf8`'s word-at-a-time check instead of the lossy decoder's byte-by-byte walk.
fn utf8_lossy(value: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(value) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(value),
    }
}
