//! For tests that must control the daemon's pipes themselves (stop reading stdout, watch the
//! pipe fill): one JSON line in, one JSON line out, each bounded by the test timeout, and how
//! much waits unread in the stdout pipe. Everything else goes through [`super::Daemon`].

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use super::TIMEOUT;

/// Bytes waiting in a full Linux pipe (64 KiB by default), less a few lines of slack.
pub const PIPE_FULL: i32 = 48 * 1024;

/// Bytes waiting unread in the daemon's stdout pipe.
pub fn pipe_bytes(stdout: &ChildStdout) -> i32 {
    use std::os::fd::AsRawFd;
    let mut waiting: libc::c_int = 0;
    // SAFETY: FIONREAD on our own open pipe fd writes one c_int.
    let result = unsafe { libc::ioctl(stdout.as_raw_fd(), libc::FIONREAD, &mut waiting) };
    assert_eq!(result, 0, "FIONREAD failed");
    waiting
}

/// Writes `message` as one line.
pub async fn send(stdin: &mut ChildStdin, message: Value) {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    stdin.write_all(&line).await.expect("write");
}

/// Reads one JSON line.
pub async fn read_json(stdout: &mut BufReader<ChildStdout>) -> Value {
    let mut line = String::new();
    let read = tokio::time::timeout(TIMEOUT, stdout.read_line(&mut line))
        .await
        .expect("timed out reading the daemon's stdout")
        .expect("read");
    assert!(read > 0, "daemon closed stdout");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("non-JSON line {line:?}: {e}"))
}

/// `initialize` (id 1), `initialized`, then `thread/start` with `params` (id 2); returns the
/// thread id.
pub async fn start_thread(
    stdin: &mut ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    params: Value,
) -> String {
    let init = json!({"id": 1, "method": "initialize",
        "params": {"clientInfo": {"name": "t", "version": "1"}}});
    send(stdin, init).await;
    response(stdout, 1).await;
    send(stdin, json!({"method": "initialized"})).await;
    send(
        stdin,
        json!({"id": 2, "method": "thread/start", "params": params}),
    )
    .await;
    let started = response(stdout, 2).await;
    started["result"]["thread"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_string()
}

/// Reads until the response with `id`, skipping notifications.
pub async fn response(stdout: &mut BufReader<ChildStdout>, id: i64) -> Value {
    for _ in 0..1_000 {
        let value = read_json(stdout).await;
        if value["id"] == id && value.get("method").is_none() {
            return value;
        }
    }
    panic!("no response to request {id}");
}
