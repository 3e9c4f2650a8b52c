//! The latency floor: a stand-in daemon that does the least any daemon must do per delta — read
//! the provider's SSE bytes, write one notification line — with blocking I/O on one thread, no
//! async runtime, no JSON parsing, no state. The latency scenario runs it like the two real
//! daemons (the driver spawns its own executable with `app-server`), so the report can say how
//! much of the added latency is this machine's (loopback, pipes, wake-ups, scheduling) and how
//! much is a daemon's own.
//!
//! It speaks just enough of the protocol for that scenario: `initialize`, `thread/start`,
//! `turn/start` (answered, then the turn is streamed before the next request is read), deltas and
//! `turn/completed`. Every other request gets an error, so using it elsewhere fails loudly.

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;

/// Runs the floor daemon on stdin/stdout until stdin closes.
pub fn run() -> std::io::Result<()> {
    let home = std::env::var("OPENTURN_HOME").map_err(std::io::Error::other)?;
    let config = std::fs::read_to_string(std::path::Path::new(&home).join("config.toml"))?;
    let base_url = quoted_after(&config, "base_url = \"")
        .ok_or_else(|| std::io::Error::other("config.toml has no base_url"))?;
    let authority = base_url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Some(id) = request_id(&line) else {
            continue;
        };
        if line.contains("\"method\":\"initialize\"") {
            writeln!(out, "{{\"id\":{id},\"result\":{{}}}}")?;
        } else if line.contains("\"method\":\"thread/start\"") {
            writeln!(
                out,
                "{{\"id\":{id},\"result\":{{\"thread\":{{\"id\":\"thr\"}}}}}}"
            )?;
        } else if line.contains("\"method\":\"turn/start\"") {
            writeln!(
                out,
                "{{\"id\":{id},\"result\":{{\"turn\":{{\"id\":\"turn\"}}}}}}"
            )?;
            out.flush()?;
            stream_turn(&authority, &mut out)?;
        } else {
            let error = "{\"code\":-32601,\"message\":\"the floor daemon only streams turns\"}";
            writeln!(out, "{{\"id\":{id},\"error\":{error}}}")?;
        }
        out.flush()?;
    }
    Ok(())
}

/// Posts one request and forwards each text delta as a notification line, flushed at once.
fn stream_turn(authority: &str, out: &mut impl Write) -> std::io::Result<()> {
    let mut socket = TcpStream::connect(authority)?;
    socket.set_nodelay(true)?;
    let body = r#"{"model":"gpt-5","input":[],"stream":true}"#;
    write!(
        socket,
        "POST /v1/responses HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut pending = Vec::new();
    let mut chunk = [0u8; 8192];
    // Bounded by the response: every round consumes bytes of it, and it ends at EOF.
    loop {
        let read = socket.read(&mut chunk)?;
        if read == 0 {
            return Err(std::io::Error::other(
                "response ended before response.completed",
            ));
        }
        pending.extend_from_slice(&chunk[..read]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            if !line.starts_with("data: ") {
                continue;
            }
            if line.contains("\"response.output_text.delta\"") {
                let delta = quoted_after(&line, "\"delta\":\"").unwrap_or_default();
                let notification = format!(
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"item/agentMessage/delta\",\"params\":\
                     {{\"threadId\":\"thr\",\"turnId\":\"turn\",\"itemId\":\"msg\",\
                     \"delta\":\"{delta}\"}}}}\n"
                );
                out.write_all(notification.as_bytes())?;
                out.flush()?;
            } else if line.contains("\"response.completed\"") {
                writeln!(
                    out,
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"turn/completed\",\"params\":{{\
                     \"threadId\":\"thr\",\"turn\":{{\"id\":\"turn\",\"status\":\"completed\"}}}}}}"
                )?;
                return out.flush();
            }
        }
    }
}

/// The text after `key` up to the next `"` (no escapes: the scenario's values have none).
fn quoted_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = text.find(key)? + key.len();
    let rest = &text[start..];
    Some(&rest[..rest.find('"')?])
}

/// The numeric `id` of a request line.
fn request_id(line: &str) -> Option<i64> {
    let start = line.find("\"id\":")? + "\"id\":".len();
    let digits: String = line[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}
