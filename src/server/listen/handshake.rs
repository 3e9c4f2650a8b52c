//! The HTTP side of a listener connection, read and answered by hand so that every refusal is
//! decided before any WebSocket state exists: the request head is bounded in size and time,
//! `/readyz` and `/healthz` answer 200, any `Origin` header is refused with 403 (a browser page
//! must never reach the daemon), the bearer token is checked (401), and only then is the
//! connection upgraded.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::auth::WsAuth;

/// Largest request head accepted; real upgrade requests are a few hundred bytes.
pub(crate) const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a client may take to send its request head.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// What became of a connection's HTTP request.
pub(crate) enum Handshake {
    /// Upgraded; the bytes read past the head belong to the WebSocket stream.
    Upgraded { leftover: Vec<u8> },
    /// Answered (health check or refusal) and done.
    Answered,
}

/// Reads the request head and answers it; upgrades when everything checks out.
pub(crate) async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    auth: &WsAuth,
) -> std::io::Result<Handshake> {
    let Ok(head) = tokio::time::timeout(HEAD_TIMEOUT, read_head(stream)).await else {
        tracing::info!("a connection did not finish its request in time; dropped");
        return Ok(Handshake::Answered);
    };
    let Some((head, leftover)) = head? else {
        respond(stream, "431 Request Header Fields Too Large", "").await?;
        return Ok(Handshake::Answered);
    };
    let Some(request) = Request::parse(&head) else {
        respond(stream, "400 Bad Request", "malformed request").await?;
        return Ok(Handshake::Answered);
    };
    let upgrade = request
        .header("upgrade")
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    if !upgrade && matches!(request.path, "/readyz" | "/healthz") {
        respond(stream, "200 OK", "").await?;
        return Ok(Handshake::Answered);
    }
    if request.header("origin").is_some() {
        respond(stream, "403 Forbidden", "").await?;
        return Ok(Handshake::Answered);
    }
    if let Err(failure) = auth.check(request.header("authorization")) {
        respond(stream, "401 Unauthorized", &failure.to_string()).await?;
        return Ok(Handshake::Answered);
    }
    let key = request.header("sec-websocket-key");
    let (true, true, Some(key)) = (request.method == "GET", upgrade, key) else {
        respond(stream, "400 Bad Request", "expected a websocket upgrade").await?;
        return Ok(Handshake::Answered);
    };
    let accept = derive_accept_key(key.as_bytes());
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\
         sec-websocket-accept: {accept}\r\n\r\n"
    );
    stream.write_all(response.as_bytes()).await?;
    stream.flush().await?;
    Ok(Handshake::Upgraded { leftover })
}

async fn respond<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: &str,
    body: &str,
) -> std::io::Result<()> {
    let content_type = if body.is_empty() {
        ""
    } else {
        "content-type: text/plain; charset=utf-8\r\n"
    };
    let response = format!(
        "HTTP/1.1 {status}\r\n{content_type}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// The head up to its blank line, and what was read after it; `None` when it is too large.
async fn read_head<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = find_blank_line(&buffer) {
            let leftover = buffer.split_off(end + 4);
            return Ok(Some((
                String::from_utf8_lossy(&buffer).into_owned(),
                leftover,
            )));
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

fn find_blank_line(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|window| window == b"\r\n\r\n")
}

/// The parts of a request head the listener looks at.
struct Request<'a> {
    method: &'a str,
    path: &'a str,
    headers: Vec<(String, &'a str)>,
}

impl<'a> Request<'a> {
    fn parse(head: &'a str) -> Option<Request<'a>> {
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next()?.split(' ');
        let method = request_line.next()?;
        let target = request_line.next()?;
        if !request_line.next()?.starts_with("HTTP/1.") {
            return None;
        }
        let path = target.split('?').next().unwrap_or(target);
        let headers = lines
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (name, value) = line.split_once(':')?;
                Some((name.trim().to_ascii_lowercase(), value.trim()))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Request {
            method,
            path,
            headers,
        })
    }

    fn header(&self, name: &str) -> Option<&'a str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| *value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_head_is_parsed_with_case_insensitive_header_names() {
        let head = "GET /readyz?x=1 HTTP/1.1\r\nHost: a\r\nOrigin: http://evil\r\n";
        let request = Request::parse(head).unwrap();
        assert_eq!((request.method, request.path), ("GET", "/readyz"));
        assert_eq!(request.header("origin"), Some("http://evil"));
        assert!(Request::parse("GET /\r\n").is_none());
    }
}
