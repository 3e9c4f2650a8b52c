//! The loopback redirect target: a listener on 127.0.0.1 (an OS-chosen port) that answers the
//! browser's one `GET /callback/<nonce>?code=…&state=…` and hands back the code. Requests for
//! any other path get a 404 and are otherwise ignored, so a stray request cannot end the login;
//! a `state` that does not match fails it (a forged redirect).

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::error::OAuthError;

/// The most of a request head read: the callback's query is a code and a state.
const MAX_HEAD: usize = 16 * 1024;

pub(super) struct CallbackListener {
    listener: TcpListener,
    path: String,
}

impl CallbackListener {
    pub async fn bind(nonce: &str) -> Result<CallbackListener, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(OAuthError::Callback)?;
        Ok(CallbackListener {
            listener,
            path: format!("/callback/{nonce}"),
        })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> Result<String, OAuthError> {
        let port = self
            .listener
            .local_addr()
            .map_err(OAuthError::Callback)?
            .port();
        Ok(format!("http://127.0.0.1:{port}{}", self.path))
    }

    /// Waits for the callback and returns its code, once its `state` is `expected_state`.
    /// The caller bounds the wait.
    pub async fn code(self, expected_state: &str) -> Result<String, OAuthError> {
        loop {
            let (stream, _) = self.listener.accept().await.map_err(OAuthError::Callback)?;
            if let Some(outcome) = self.answer(stream, expected_state).await {
                return outcome;
            }
        }
    }

    /// Answers one connection: `None` when it was not the callback.
    async fn answer(
        &self,
        mut stream: TcpStream,
        expected_state: &str,
    ) -> Option<Result<String, OAuthError>> {
        let target = read_target(&mut stream).await?;
        let url = Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
        if url.path() != self.path {
            let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
            return None;
        }
        let field = |name: &str| {
            url.query_pairs()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
        };
        let outcome = match (field("code"), field("state"), field("error")) {
            (_, _, Some(error)) => Err(OAuthError::Denied(error)),
            (Some(code), Some(state), None) if state == expected_state => Ok(code),
            (Some(_), _, None) => Err(OAuthError::Denied(
                "the callback's state does not match this login".to_string(),
            )),
            (None, _, None) => Err(OAuthError::Denied(
                "the callback carried no code".to_string(),
            )),
        };
        let body = match &outcome {
            Ok(_) => "Login complete. You may close this window.",
            Err(_) => "Login failed. You may close this window.",
        };
        let _ = respond(&mut stream, "200 OK", body).await;
        Some(outcome)
    }
}

/// The request target of a `GET` (its path and query), or `None` for anything else.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return None;
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.lines().next()?.split_whitespace();
    (words.next()? == "GET").then_some(())?;
    words.next().map(str::to_string)
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
