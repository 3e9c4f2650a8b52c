//! Tests for the mock provider, plus a raw HTTP/1.1 test client that shows
//! exactly which bytes and chunk boundaries the server produced.
//!
//! - `http_framing.rs` — request parsing and chunked decoding, split at every byte.
//! - `serving.rs` — a live server over raw TCP: replies, faults, recording.
//! - `client_interop.rs` — the same server through reqwest, and shutdown.
//! - `transcripts.rs` — transcript loading, shipped files, builders.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a failing test should stop at the line that failed"
)]

mod client_interop;
mod http_framing;
mod serving;
mod transcripts;

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bound for every await in these tests, so a bug fails instead of hanging.
pub(super) const STEP: Duration = Duration::from_secs(5);

/// Awaits `future` for at most [`STEP`].
pub(super) async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(STEP, future)
        .await
        .expect("test step timed out")
}

/// Polls `condition` every few milliseconds for at most [`STEP`].
pub(super) async fn eventually(mut condition: impl FnMut() -> bool) {
    within(async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// One piece of a chunked response body as seen on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Chunk {
    Data(Vec<u8>),
    /// The terminating zero-size chunk.
    Last,
    /// The connection closed before the body ended.
    Eof,
}

/// A response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A minimal client that reads responses byte-exactly, keeping chunk
/// boundaries, so tests can assert on framing.
pub(super) struct RawClient {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl RawClient {
    pub(super) async fn connect(addr: SocketAddr) -> RawClient {
        let stream = within(TcpStream::connect(addr)).await.unwrap();
        RawClient {
            stream,
            buf: Vec::new(),
        }
    }

    pub(super) async fn send(&mut self, bytes: &[u8]) {
        within(self.stream.write_all(bytes)).await.unwrap();
    }

    pub(super) async fn post_json(&mut self, path: &str, body: &serde_json::Value) {
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\n\
             Authorization: Bearer sk-test\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.send(request.as_bytes()).await;
    }

    /// Reads more bytes; false on EOF or error.
    async fn fill(&mut self) -> bool {
        let mut scratch = [0u8; 4096];
        match within(self.stream.read(&mut scratch)).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&scratch[..n]);
                true
            }
        }
    }

    async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8(self.buf[..pos].to_vec()).unwrap();
                self.buf.drain(..pos + 2);
                return Some(line);
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    async fn exact(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill().await {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }

    pub(super) async fn read_head(&mut self) -> Head {
        let status_line = self
            .line()
            .await
            .expect("connection closed before a response");
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        while let Some(line) = self.line().await {
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
        Head { status, headers }
    }

    pub(super) async fn next_chunk(&mut self) -> Chunk {
        let Some(size_line) = self.line().await else {
            return Chunk::Eof;
        };
        let size = usize::from_str_radix(&size_line, 16).unwrap();
        if size == 0 {
            return match self.line().await {
                Some(_) => Chunk::Last,
                None => Chunk::Eof,
            };
        }
        let Some(data) = self.exact(size).await else {
            return Chunk::Eof;
        };
        match self.line().await {
            Some(rest) if rest.is_empty() => Chunk::Data(data),
            Some(rest) => panic!("chunk longer than announced: {rest:?}"),
            None => Chunk::Eof,
        }
    }

    /// Every chunk up to and including `Last` or `Eof`.
    pub(super) async fn all_chunks(&mut self) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        loop {
            let chunk = self.next_chunk().await;
            let done = !matches!(chunk, Chunk::Data(_));
            chunks.push(chunk);
            if done {
                return chunks;
            }
        }
    }

    pub(super) async fn fixed_body(&mut self, head: &Head) -> String {
        let length = head.header("content-length").unwrap().parse().unwrap();
        String::from_utf8(self.exact(length).await.unwrap()).unwrap()
    }

    /// Whether the server closes the connection within `wait`.
    pub(super) async fn closed_within(&mut self, wait: Duration) -> bool {
        let mut scratch = [0u8; 1024];
        matches!(
            tokio::time::timeout(wait, self.stream.read(&mut scratch)).await,
            Ok(Ok(0) | Err(_))
        )
    }

    /// Whether nothing at all arrives within `wait` (connection still open).
    pub(super) async fn silent_for(&mut self, wait: Duration) -> bool {
        let mut scratch = [0u8; 1024];
        tokio::time::timeout(wait, self.stream.read(&mut scratch))
            .await
            .is_err()
    }
}

/// The data of all `Data` chunks, concatenated.
pub(super) fn body_text(chunks: &[Chunk]) -> String {
    let bytes: Vec<u8> = chunks
        .iter()
        .filter_map(|chunk| match chunk {
            Chunk::Data(data) => Some(data.as_slice()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect();
    String::from_utf8(bytes).unwrap()
}

/// Parses SSE text into (event name, data) pairs; enough for these tests.
pub(super) fn parse_sse(text: &str) -> Vec<(Option<String>, String)> {
    text.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_owned());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push(value);
                }
            }
            (event, data.join("\n"))
        })
        .collect()
}
