//! Input-reading checks: the JSON-RPC line path and the rollout reader.

use std::path::Path;

use openturn::protocol::jsonrpc::{Incoming, IncomingMessage};
use openturn::protocol::methods::ClientRequest;
use openturn::rollout::reader::parse_rollout;
use openturn::server::stdio::{InputLine, LineReader};

/// A small limit so oversized lines are exercised too.
const MAX_LINE: usize = 256;

/// Splits `data` into lines the way the daemon reads stdin, then parses, classifies and decodes
/// each one as the daemon does. Invariants: framing never panics, accounts for every byte, never
/// yields a line over the limit or containing '\n'; parsing and decoding never panic.
pub fn jsonrpc_line(data: &[u8]) {
    // A tiny buffer makes lines span many fill_buf calls. Reading a byte slice never waits, so
    // a plain executor drives it without a runtime.
    let reader = tokio::io::BufReader::with_capacity(7, data);
    let mut lines = LineReader::new(reader, MAX_LINE);
    let mut consumed = 0usize;
    // Every call consumes at least one byte or returns Eof, so this bound is never reached.
    for _ in 0..=data.len() {
        match futures::executor::block_on(lines.next_line()) {
            Ok(InputLine::Eof) => break,
            Ok(InputLine::Line(bytes)) => {
                assert!(
                    bytes.len() <= MAX_LINE,
                    "a line over the limit was returned"
                );
                assert!(!bytes.contains(&b'\n'), "a line contains a newline");
                consumed += bytes.len();
                classify_and_decode(&bytes);
            }
            Ok(InputLine::TooLong { length }) => {
                assert!(length > MAX_LINE, "TooLong for a line within the limit");
                consumed += length;
            }
            Err(error) => panic!("reading a byte slice failed: {error}"),
        }
    }
    let newline_count = data.iter().filter(|b| **b == b'\n').count();
    assert_eq!(
        consumed + newline_count,
        data.len(),
        "line framing lost or invented bytes"
    );
}

fn classify_and_decode(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(message) = serde_json::from_str::<IncomingMessage<'_>>(text) else {
        return;
    };
    if let Incoming::Request { method, params, .. } = message.classify() {
        let _ = ClientRequest::decode(&method, params);
    }
}

/// Parses `data` as a rollout file. Invariant: never panics; a file that parses has its
/// session meta and no more items than lines.
pub fn rollout_reader(data: &[u8]) {
    if let Ok(contents) = parse_rollout(Path::new("fuzz.jsonl"), data) {
        let lines = data.split(|b| *b == b'\n').count();
        assert!(contents.items.len() < lines, "more items than lines");
    }
}
