//! The client end of the in-process connection: JSON lines over an in-memory pipe to the same
//! `server::serve` the app-server runs. Requests are correlated with their responses here;
//! everything else the server sends (notifications, server→client requests) is handed back in
//! arrival order, including what arrived while a response was awaited.

use std::collections::VecDeque;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use super::error::ExecError;

/// Bytes buffered in each direction of the in-memory pipe; the server's own bounded queues
/// apply behind it, so this only sets how much is in flight at once.
pub const PIPE_CAPACITY: usize = 256 * 1024;

pub struct Connection {
    /// `None` once closed: the server then sees EOF and shuts down.
    to_server: Option<DuplexStream>,
    from_server: Lines<BufReader<DuplexStream>>,
    next_id: i64,
    /// Messages that arrived while a response was awaited.
    backlog: VecDeque<Value>,
}

impl Connection {
    pub fn new(to_server: DuplexStream, from_server: DuplexStream) -> Connection {
        Connection {
            to_server: Some(to_server),
            from_server: BufReader::new(from_server).lines(),
            next_id: 1,
            backlog: VecDeque::new(),
        }
    }

    pub async fn send(&mut self, message: &Value) -> Result<(), ExecError> {
        let Some(writer) = self.to_server.as_mut() else {
            return Err(ExecError::ServerGone);
        };
        let mut line =
            serde_json::to_vec(message).map_err(|e| ExecError::Protocol(e.to_string()))?;
        line.push(b'\n');
        writer
            .write_all(&line)
            .await
            .map_err(|_| ExecError::ServerGone)
    }

    /// Sends a request and returns its id, without waiting for the response.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Result<i64, ExecError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// Sends a request and waits for its result; a JSON-RPC error becomes
    /// [`ExecError::Rejected`] naming the method.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, ExecError> {
        let id = self.send_request(method, params).await?;
        loop {
            let message = self.read().await?.ok_or(ExecError::ServerGone)?;
            if message.get("method").is_none() && message["id"] == json!(id) {
                return response_result(method, message);
            }
            self.backlog.push_back(message);
        }
    }

    /// The next message: backlog first, then the pipe; `None` when the server closed it.
    pub async fn next_message(&mut self) -> Result<Option<Value>, ExecError> {
        match self.backlog.pop_front() {
            Some(message) => Ok(Some(message)),
            None => self.read().await,
        }
    }

    async fn read(&mut self) -> Result<Option<Value>, ExecError> {
        loop {
            let Some(line) = self
                .from_server
                .next_line()
                .await
                .map_err(|e| ExecError::Protocol(e.to_string()))?
            else {
                return Ok(None);
            };
            if line.trim().is_empty() {
                continue;
            }
            return serde_json::from_str(&line)
                .map(Some)
                .map_err(|e| ExecError::Protocol(format!("unreadable server line: {e}")));
        }
    }

    /// Closes the pipe towards the server: it sees EOF, ends its turns and shuts down.
    pub fn close(&mut self) {
        self.to_server = None;
    }
}

/// The `result` of a response, or the error it carries.
pub fn response_result(method: &str, message: Value) -> Result<Value, ExecError> {
    if let Some(error) = message.get("error") {
        return Err(ExecError::Rejected {
            method: method.to_string(),
            message: error["message"]
                .as_str()
                .unwrap_or("unknown error")
                .to_string(),
        });
    }
    Ok(message.get("result").cloned().unwrap_or(Value::Null))
}
