//! Minimal HTTP/1.1 framing for the mock provider.
//!
//! This module owns bytes only: it reads one request (request line, headers,
//! and a body framed by `Content-Length` or `Transfer-Encoding: chunked`) out of
//! a connection buffer, and it encodes response heads and body chunks. It knows
//! nothing about routes, scripts or SSE; `server.rs` decides what to answer.
//!
//! Parsing is deliberately strict where ambiguity could hide a client bug
//! (conflicting `Content-Length`, unknown transfer codings, folded headers) and
//! bounded everywhere, so garbage input ends in an [`HttpError`], never a panic
//! or an unbounded buffer.

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Largest request head (request line plus headers) we buffer before giving up.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body we accept; Responses requests with long histories stay
/// far below this, so hitting it means the peer is not a sane client.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Longest chunk-size or trailer line in a chunked request body.
const MAX_LINE_BYTES: usize = 8 * 1024;

/// The terminating chunk of a chunked body (no trailers).
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// Why a request could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The bytes are not an HTTP/1.x request we understand; answer 400.
    #[error("malformed request: {0}")]
    Malformed(&'static str),
    /// The head did not end within [`MAX_HEAD_BYTES`]; answer 431.
    #[error("request head larger than {MAX_HEAD_BYTES} bytes")]
    HeadTooLarge,
    /// The body is larger than [`MAX_BODY_BYTES`]; answer 413.
    #[error("request body larger than {MAX_BODY_BYTES} bytes")]
    BodyTooLarge,
    /// The peer closed the connection part-way through a request.
    #[error("connection closed in the middle of a request")]
    UnexpectedEof,
    /// The socket failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl HttpError {
    /// The status to answer with, or `None` when the connection is unusable
    /// and should simply be closed.
    pub(crate) fn response_status(&self) -> Option<u16> {
        match self {
            HttpError::Malformed(_) => Some(400),
            HttpError::HeadTooLarge => Some(431),
            HttpError::BodyTooLarge => Some(413),
            HttpError::UnexpectedEof | HttpError::Io(_) => None,
        }
    }
}

/// The HTTP versions we speak; anything else is rejected as malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpVersion {
    Http10,
    Http11,
}

/// How the body following a head is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    Empty,
    Length(usize),
    Chunked,
}

/// A parsed request line and header block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    pub method: String,
    /// The path without the query, always starting with `/` (absolute-form
    /// targets such as `http://host/v1/responses` are reduced to their path).
    pub path: String,
    pub query: Option<String>,
    pub version: HttpVersion,
    /// Header names are lowercased; values are trimmed; order is preserved.
    pub headers: Vec<(String, String)>,
}

impl RequestHead {
    /// The first header with this (case-insensitive) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header_name, _)| header_name.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Whether the connection must close after this exchange.
    pub(crate) fn wants_close(&self) -> bool {
        let connection = self.header("connection").map(str::to_ascii_lowercase);
        let has_token = |token: &str| {
            connection
                .as_deref()
                .is_some_and(|value| value.split(',').any(|part| part.trim() == token))
        };
        match self.version {
            HttpVersion::Http11 => has_token("close"),
            HttpVersion::Http10 => !has_token("keep-alive"),
        }
    }

    /// Whether the client waits for `100 Continue` before sending its body.
    pub(crate) fn expects_continue(&self) -> bool {
        self.header("expect")
            .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"))
    }

    /// How the body is delimited (RFC 9112 §6.3, minus the response-only rules).
    pub(crate) fn body_framing(&self) -> Result<BodyFraming, HttpError> {
        if let Some(codings) = self.header("transfer-encoding") {
            let last = codings.rsplit(',').next().unwrap_or_default().trim();
            if last.eq_ignore_ascii_case("chunked") {
                return Ok(BodyFraming::Chunked);
            }
            return Err(HttpError::Malformed("unsupported transfer-encoding"));
        }
        let mut length: Option<usize> = None;
        for (name, value) in &self.headers {
            if name != "content-length" {
                continue;
            }
            let parsed = parse_decimal(value).ok_or(HttpError::Malformed("bad content-length"))?;
            if length.is_some_and(|previous| previous != parsed) {
                return Err(HttpError::Malformed("conflicting content-length headers"));
            }
            length = Some(parsed);
        }
        match length {
            None | Some(0) => Ok(BodyFraming::Empty),
            Some(n) if n > MAX_BODY_BYTES => Err(HttpError::BodyTooLarge),
            Some(n) => Ok(BodyFraming::Length(n)),
        }
    }
}

fn parse_decimal(value: &str) -> Option<usize> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// Position just past the blank line ending the head, if the buffer holds one.
/// Bare `\n` line endings are tolerated, as RFC 9112 §2.2 allows.
fn find_head_end(buf: &[u8]) -> Option<(usize, usize)> {
    buf.iter().enumerate().find_map(|(index, &byte)| {
        if byte != b'\n' {
            return None;
        }
        let rest = &buf[index + 1..];
        if rest.starts_with(b"\n") {
            Some((index, index + 2))
        } else if rest.starts_with(b"\r\n") {
            Some((index, index + 3))
        } else {
            None
        }
    })
}

/// Parses a head from the start of `buf`. `Ok(None)` means more bytes are
/// needed; on success returns the head and how many bytes it occupied.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(RequestHead, usize)>, HttpError> {
    let Some((text_end, consumed)) = find_head_end(buf) else {
        if buf.len() > MAX_HEAD_BYTES {
            return Err(HttpError::HeadTooLarge);
        }
        return Ok(None);
    };
    if consumed > MAX_HEAD_BYTES {
        return Err(HttpError::HeadTooLarge);
    }
    let text = std::str::from_utf8(&buf[..text_end])
        .map_err(|_| HttpError::Malformed("request head is not UTF-8"))?;
    let mut lines = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line));
    let request_line = lines.next().unwrap_or_default();
    let (method, target, version) = parse_request_line(request_line)?;
    let (path, query) = split_target(target)?;
    let mut headers = Vec::new();
    for line in lines {
        headers.push(parse_header_line(line)?);
    }
    let head = RequestHead {
        method: method.to_owned(),
        path,
        query,
        version,
        headers,
    };
    Ok(Some((head, consumed)))
}

fn parse_request_line(line: &str) -> Result<(&str, &str, HttpVersion), HttpError> {
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::Malformed(
            "request line is not `METHOD TARGET VERSION`",
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(HttpError::Malformed("bad method"));
    }
    if target.is_empty() || target.bytes().any(|b| b.is_ascii_control()) {
        return Err(HttpError::Malformed("bad request target"));
    }
    let version = match version {
        "HTTP/1.1" => HttpVersion::Http11,
        "HTTP/1.0" => HttpVersion::Http10,
        _ => return Err(HttpError::Malformed("unsupported HTTP version")),
    };
    Ok((method, target, version))
}

fn split_target(target: &str) -> Result<(String, Option<String>), HttpError> {
    let origin_form = if target.starts_with('/') {
        target
    } else if let Some(after_scheme) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        after_scheme
            .find('/')
            .map_or("/", |slash| &after_scheme[slash..])
    } else {
        return Err(HttpError::Malformed("request target is not a path"));
    };
    Ok(match origin_form.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (origin_form.to_owned(), None),
    })
}

fn parse_header_line(line: &str) -> Result<(String, String), HttpError> {
    if line.starts_with([' ', '\t']) {
        return Err(HttpError::Malformed("obsolete header line folding"));
    }
    let (name, value) = line
        .split_once(':')
        .ok_or(HttpError::Malformed("header without colon"))?;
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(HttpError::Malformed("bad header name"));
    }
    Ok((
        name.to_ascii_lowercase(),
        value.trim_matches([' ', '\t']).to_owned(),
    ))
}

/// RFC 9110 `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Reads the next request head. `Ok(None)` means the peer closed the
/// connection cleanly between requests. Stray blank lines before a request
/// line are skipped (RFC 9112 §2.2).
pub(crate) async fn read_head<R>(
    reader: &mut R,
    buf: &mut BytesMut,
) -> Result<Option<RequestHead>, HttpError>
where
    R: AsyncRead + Unpin,
{
    loop {
        let blank = buf
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        buf.advance(blank);
        if let Some((head, consumed)) = parse_head(buf)? {
            buf.advance(consumed);
            return Ok(Some(head));
        }
        if reader.read_buf(buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(HttpError::UnexpectedEof)
            };
        }
    }
}

/// Reads the body announced by `framing`, leaving any bytes of a following
/// (pipelined) request in `buf`.
pub(crate) async fn read_body<R>(
    reader: &mut R,
    buf: &mut BytesMut,
    framing: BodyFraming,
) -> Result<Bytes, HttpError>
where
    R: AsyncRead + Unpin,
{
    match framing {
        BodyFraming::Empty => Ok(Bytes::new()),
        BodyFraming::Length(length) => {
            while buf.len() < length {
                if reader.read_buf(buf).await? == 0 {
                    return Err(HttpError::UnexpectedEof);
                }
            }
            Ok(buf.split_to(length).freeze())
        }
        BodyFraming::Chunked => {
            let mut decoder = ChunkedDecoder::default();
            while !decoder.decode(buf)? {
                if reader.read_buf(buf).await? == 0 {
                    return Err(HttpError::UnexpectedEof);
                }
            }
            Ok(decoder.into_body())
        }
    }
}

/// Where a [`ChunkedDecoder`] is inside the chunked body.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Data(usize),
    DataEnd,
    Trailer,
    Done,
}

/// Incremental decoder for a chunked request body. It consumes bytes from the
/// connection buffer as they arrive, so a body split across many reads is
/// decoded in linear time.
#[derive(Debug, Default)]
pub(crate) struct ChunkedDecoder {
    body: Vec<u8>,
    state: ChunkState,
}

impl ChunkedDecoder {
    /// Consumes as much of `buf` as possible; returns `true` once the final
    /// chunk and trailer section have been read.
    pub(crate) fn decode(&mut self, buf: &mut BytesMut) -> Result<bool, HttpError> {
        loop {
            match self.state {
                ChunkState::Size => {
                    let Some(line) = take_line(buf)? else {
                        return Ok(false);
                    };
                    let size = parse_chunk_size(&line)?;
                    if self.body.len().saturating_add(size) > MAX_BODY_BYTES {
                        return Err(HttpError::BodyTooLarge);
                    }
                    self.state = if size == 0 {
                        ChunkState::Trailer
                    } else {
                        ChunkState::Data(size)
                    };
                }
                ChunkState::Data(remaining) => {
                    if buf.is_empty() {
                        return Ok(false);
                    }
                    let take = remaining.min(buf.len());
                    self.body.extend_from_slice(&buf.split_to(take));
                    self.state = match remaining - take {
                        0 => ChunkState::DataEnd,
                        left => ChunkState::Data(left),
                    };
                }
                ChunkState::DataEnd => {
                    let Some(line) = take_line(buf)? else {
                        return Ok(false);
                    };
                    if !line.is_empty() {
                        return Err(HttpError::Malformed("chunk data longer than its size"));
                    }
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let Some(line) = take_line(buf)? else {
                        return Ok(false);
                    };
                    if line.is_empty() {
                        self.state = ChunkState::Done;
                    }
                }
                ChunkState::Done => return Ok(true),
            }
        }
    }

    pub(crate) fn into_body(self) -> Bytes {
        Bytes::from(self.body)
    }
}

/// Takes one line (without its `\r\n` or `\n`) off the front of `buf`.
fn take_line(buf: &mut BytesMut) -> Result<Option<BytesMut>, HttpError> {
    let Some(newline) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > MAX_LINE_BYTES {
            return Err(HttpError::Malformed("chunk line too long"));
        }
        return Ok(None);
    };
    if newline > MAX_LINE_BYTES {
        return Err(HttpError::Malformed("chunk line too long"));
    }
    let mut line = buf.split_to(newline + 1);
    line.truncate(newline);
    if line.last() == Some(&b'\r') {
        line.truncate(newline - 1);
    }
    Ok(Some(line))
}

fn parse_chunk_size(line: &[u8]) -> Result<usize, HttpError> {
    let digits = line.split(|&b| b == b';').next().unwrap_or_default();
    let digits = std::str::from_utf8(digits)
        .map_err(|_| HttpError::Malformed("bad chunk size"))?
        .trim_matches([' ', '\t']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HttpError::Malformed("bad chunk size"));
    }
    usize::from_str_radix(digits, 16).map_err(|_| HttpError::Malformed("chunk size overflows"))
}

/// The standard reason phrase, so logs of raw traffic read naturally.
pub(crate) fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Encodes a status line and header block. CR and LF inside names or values
/// are replaced by spaces, so a careless script cannot break the framing.
pub(crate) fn encode_head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status)).into_bytes();
    for (name, value) in headers {
        for part in [name.as_str(), ": ", value.as_str(), "\r\n"] {
            if part == "\r\n" {
                out.extend_from_slice(b"\r\n");
            } else {
                out.extend(
                    part.bytes()
                        .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
                );
            }
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Appends `data` as one chunk of a chunked body. Empty data is skipped: an
/// empty chunk would terminate the body.
pub(crate) fn encode_chunk(data: &[u8], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}
