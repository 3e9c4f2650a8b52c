//! A daemon serving `--listen unix://…` or `ws://…`, and a small WebSocket JSON-RPC client for
//! it (one message per text frame), for the tests of many connections on one daemon.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

use crate::support::*;

/// A daemon listening on a socket; killed when dropped.
pub struct Listening {
    pub child: Child,
    /// `ws://127.0.0.1:PORT` or `unix://PATH`, as the daemon announced it.
    pub url: String,
    pub stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// Starts `openturn app-server --listen LISTEN EXTRA…` and waits for its announcement.
pub async fn listen(home: &Path, overrides: &[String], listen: &str, extra: &[&str]) -> Listening {
    let mut command = Command::new(openturn_bin());
    for o in overrides {
        command.arg("-c").arg(o);
    }
    command
        .arg("app-server")
        .arg("--listen")
        .arg(listen)
        .args(extra)
        .env("OPENTURN_HOME", home)
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let url = tokio::time::timeout(TIMEOUT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            stderr.lock().unwrap().push(line.clone());
            if let Some(url) = line.trim().strip_prefix("listening on: ") {
                return url.to_string();
            }
        }
        panic!(
            "the daemon ended before listening: {:?}",
            stderr.lock().unwrap()
        );
    })
    .await
    .expect("the daemon announces where it listens");
    let log = stderr.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            log.lock().unwrap().push(line);
        }
    });
    Listening { child, url, stderr }
}

impl Listening {
    pub fn socket_path(&self) -> PathBuf {
        PathBuf::from(self.url.strip_prefix("unix://").unwrap())
    }

    pub fn tcp_address(&self) -> String {
        self.url.strip_prefix("ws://").unwrap().to_string()
    }

    /// A connection with `Authorization: Bearer token` when a token is given.
    pub async fn connect(&self, token: Option<&str>) -> Ws {
        self.try_connect(token, &[]).await.unwrap()
    }

    /// The upgrade's outcome: a connection, or the HTTP status the daemon refused it with.
    pub async fn try_connect(
        &self,
        token: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Result<Ws, u16> {
        let mut request = "ws://localhost/".into_client_request().unwrap();
        if let Some(token) = token {
            request
                .headers_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
        }
        for (name, value) in headers {
            let name: http::HeaderName = name.parse().unwrap();
            request.headers_mut().insert(name, value.parse().unwrap());
        }
        let result = if let Some(path) = self.url.strip_prefix("unix://") {
            let stream = tokio::net::UnixStream::connect(path).await.unwrap();
            tokio_tungstenite::client_async(request, MaybeUnix::Unix(stream)).await
        } else {
            let stream = tokio::net::TcpStream::connect(self.tcp_address())
                .await
                .unwrap();
            tokio_tungstenite::client_async(request, MaybeUnix::Tcp(stream)).await
        };
        match result {
            Ok((ws, _)) => Ok(Ws {
                ws,
                next_id: 1,
                backlog: VecDeque::new(),
            }),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                Err(response.status().as_u16())
            }
            Err(error) => panic!("websocket handshake failed: {error}"),
        }
    }

    /// A plain HTTP GET of `path`: its status line.
    pub async fn http_get(&self, path: &str, headers: &str) -> String {
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{headers}\r\n");
        let mut response = Vec::new();
        if let Some(socket) = self.url.strip_prefix("unix://") {
            let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            stream.read_to_end(&mut response).await.unwrap();
        } else {
            let mut stream = tokio::net::TcpStream::connect(self.tcp_address())
                .await
                .unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            stream.read_to_end(&mut response).await.unwrap();
        }
        String::from_utf8_lossy(&response)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    }

    pub fn terminate(&self) {
        if let Some(pid) = self.child.id() {
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        }
    }

    pub async fn wait_exit(&mut self) -> Option<i32> {
        tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("the daemon exits")
            .unwrap()
            .code()
    }
}

/// A Unix or TCP stream, so one client type serves both listeners.
pub enum MaybeUnix {
    Unix(tokio::net::UnixStream),
    Tcp(tokio::net::TcpStream),
}

impl tokio::io::AsyncRead for MaybeUnix {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            MaybeUnix::Unix(s) => std::pin::Pin::new(s).poll_read(cx, buf),
            MaybeUnix::Tcp(s) => std::pin::Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for MaybeUnix {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.get_mut() {
            MaybeUnix::Unix(s) => std::pin::Pin::new(s).poll_write(cx, buf),
            MaybeUnix::Tcp(s) => std::pin::Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            MaybeUnix::Unix(s) => std::pin::Pin::new(s).poll_flush(cx),
            MaybeUnix::Tcp(s) => std::pin::Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            MaybeUnix::Unix(s) => std::pin::Pin::new(s).poll_shutdown(cx),
            MaybeUnix::Tcp(s) => std::pin::Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// One WebSocket JSON-RPC connection.
pub struct Ws {
    pub ws: tokio_tungstenite::WebSocketStream<MaybeUnix>,
    next_id: i64,
    backlog: VecDeque<Value>,
}

/// What the daemon did next on a connection.
#[derive(Debug)]
pub enum Next {
    Message(Value),
    Closed(Option<CloseFrame>),
}

impl Ws {
    pub async fn send(&mut self, message: Value) {
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .unwrap();
    }

    /// The next message or the close, waiting at most the suite's timeout.
    pub async fn next_event(&mut self) -> Next {
        if let Some(value) = self.backlog.pop_front() {
            return Next::Message(value);
        }
        loop {
            let frame = tokio::time::timeout(TIMEOUT, self.ws.next())
                .await
                .expect("a message within the timeout");
            match frame {
                Some(Ok(Message::Text(text))) => {
                    return Next::Message(serde_json::from_str(&text).unwrap())
                }
                Some(Ok(Message::Close(frame))) => return Next::Closed(frame),
                None | Some(Err(_)) => return Next::Closed(None),
                Some(Ok(_)) => continue,
            }
        }
    }

    pub async fn next_message(&mut self) -> Value {
        match self.next_event().await {
            Next::Message(value) => value,
            Next::Closed(frame) => panic!("connection closed: {frame:?}"),
        }
    }

    /// Sends a request and returns its response; other messages wait in the backlog.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        let mut skipped = Vec::new();
        let response = loop {
            let message = match self.backlog.pop_front() {
                Some(message) => message,
                None => self.next_message_from_socket().await,
            };
            if message["id"] == id && message.get("method").is_none() {
                break message;
            }
            skipped.push(message);
        };
        for message in skipped.into_iter().rev() {
            self.backlog.push_front(message);
        }
        response
    }

    async fn next_message_from_socket(&mut self) -> Value {
        let saved = std::mem::take(&mut self.backlog);
        let message = self.next_message().await;
        self.backlog = saved;
        message
    }

    pub async fn initialize(&mut self) {
        let response = self
            .request(
                "initialize",
                json!({"clientInfo": {"name": "listener-tests", "version": "1.0"}}),
            )
            .await;
        assert!(response.get("result").is_some(), "{response}");
        self.send(json!({"method": "initialized"})).await;
    }

    /// Messages up to and including the first that satisfies `done`.
    pub async fn collect_until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let message = self.next_message().await;
            let stop = done(&message);
            out.push(message);
            if stop {
                return out;
            }
        }
    }
}
