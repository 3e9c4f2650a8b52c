//! `app-server daemon start|stop|restart|version` and `app-server proxy`: a background daemon on
//! the default socket, managed through a pid file beside the socket (`daemon.pid`: the pid, then
//! the version that started) and logging to `daemon.log` there; and a stdio bridge to a running
//! daemon's socket for clients that can only spawn a process (and, the same bridge, `exec
//! --remote`). Every command prints one JSON
//! object, as the reference's does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_tungstenite::tungstenite::Message;

use super::default_socket;

/// How long `start` waits for the new daemon's socket to answer.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long `stop` waits after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Why a daemon command failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("no daemon is running on {0}")]
    NotRunning(PathBuf),
    #[error("the daemon did not start listening within {seconds}s; see {log}")]
    StartTimedOut { seconds: u64, log: PathBuf },
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("the daemon's socket refused the connection: {0}")]
    Handshake(String),
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> ControlError {
    move |source| ControlError::Io { what, source }
}

/// The files of the background daemon under `home`.
struct Files {
    socket: PathBuf,
    pid: PathBuf,
    log: PathBuf,
}

impl Files {
    fn of(home: &Path) -> Files {
        let socket = default_socket(home);
        let dir = socket.parent().map(Path::to_path_buf).unwrap_or_default();
        Files {
            socket,
            pid: dir.join("daemon.pid"),
            log: dir.join("daemon.log"),
        }
    }

    /// The recorded pid and version, when the file is there and well-formed.
    fn recorded(&self) -> Option<(i32, String)> {
        let text = std::fs::read_to_string(&self.pid).ok()?;
        let mut lines = text.lines();
        let pid = lines.next()?.trim().parse().ok()?;
        Some((pid, lines.next().unwrap_or_default().trim().to_string()))
    }
}

fn socket_is_live(socket: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

fn report(status: &str, files: &Files, pid: Option<i32>, running_version: Option<&str>) -> String {
    let mut value = json!({
        "status": status,
        "backend": "pid",
        "socketPath": files.socket.display().to_string(),
        "cliVersion": env!("CARGO_PKG_VERSION"),
    });
    if let Some(pid) = pid {
        value["pid"] = json!(pid);
    }
    if let Some(version) = running_version {
        value["appServerVersion"] = json!(version);
    }
    value.to_string()
}

/// Starts the daemon unless one already answers on the socket. `args` are the global flags
/// (`-c`, `--enable`, `--disable`) the daemon is started with.
pub async fn start(home: &Path, args: &[String]) -> Result<String, ControlError> {
    let files = Files::of(home);
    if socket_is_live(&files.socket) {
        let recorded = files.recorded();
        return Ok(report(
            "alreadyRunning",
            &files,
            recorded.as_ref().map(|(pid, _)| *pid),
            recorded.as_ref().map(|(_, version)| version.as_str()),
        ));
    }
    if let Some(dir) = files.socket.parent() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io("creating the daemon's directory"))?;
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&files.log)
        .map_err(io("opening the daemon's log"))?;
    let exe = std::env::current_exe().map_err(io("locating the openturn binary"))?;
    let mut command = std::process::Command::new(exe);
    command
        .args(args)
        .args(["app-server", "--listen", "unix://"])
        .env("OPENTURN_HOME", home)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().map_err(io("opening the daemon's log"))?)
        .stderr(log);
    {
        use std::os::unix::process::CommandExt;
        // A session of its own: the terminal that started it closing does not reach it.
        command.process_group(0);
    }
    let child = command.spawn().map_err(io("starting the daemon"))?;
    let pid = child.id() as i32;
    // The daemon is not waited for: it outlives this command.
    drop(child);
    let record = format!("{pid}\n{}\n", env!("CARGO_PKG_VERSION"));
    std::fs::write(&files.pid, record).map_err(io("writing the pid file"))?;
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    while !socket_is_live(&files.socket) {
        if tokio::time::Instant::now() >= deadline || !process_alive(pid) {
            return Err(ControlError::StartTimedOut {
                seconds: START_TIMEOUT.as_secs(),
                log: files.log.clone(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(report(
        "started",
        &files,
        Some(pid),
        Some(env!("CARGO_PKG_VERSION")),
    ))
}

/// Stops the daemon: SIGTERM (it finishes its turns and removes its socket), then SIGKILL
/// after a grace period.
pub async fn stop(home: &Path) -> Result<String, ControlError> {
    let files = Files::of(home);
    let Some((pid, _)) = files.recorded().filter(|(pid, _)| process_alive(*pid)) else {
        let _ = std::fs::remove_file(&files.pid);
        return Ok(report("notRunning", &files, None, None));
    };
    // SAFETY: plain signals to the pid the daemon recorded.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = tokio::time::Instant::now() + STOP_GRACE;
    while process_alive(pid) && !is_zombie(pid) {
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(pid, "the daemon did not stop in time; killing it");
            unsafe { libc::kill(pid, libc::SIGKILL) };
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = std::fs::remove_file(&files.pid);
    if !socket_is_live(&files.socket) {
        // Left behind by a forced stop.
        let _ = std::fs::remove_file(&files.socket);
    }
    Ok(report("stopped", &files, Some(pid), None))
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// The versions of this binary and of the running daemon; an error when none runs.
pub fn version(home: &Path) -> Result<String, ControlError> {
    let files = Files::of(home);
    if !socket_is_live(&files.socket) {
        return Err(ControlError::NotRunning(files.socket));
    }
    let recorded = files.recorded();
    Ok(report(
        "running",
        &files,
        recorded.as_ref().map(|(pid, _)| *pid),
        Some(
            recorded
                .as_ref()
                .map(|(_, version)| version.as_str())
                .unwrap_or("unknown"),
        ),
    ))
}

/// Bridges stdin/stdout (one JSON message per line) to the daemon's socket (one per text
/// frame) until either side ends.
pub async fn proxy(socket: &Path) -> Result<(), ControlError> {
    let remote = connect(&format!("unix://{}", socket.display()), None).await?;
    bridge(remote, tokio::io::stdin(), tokio::io::stdout()).await
}

/// A connection to a running daemon, upgraded and authenticated.
pub struct Remote(tokio_tungstenite::WebSocketStream<Stream>);

/// Connects to a daemon at `url` (`ws://HOST:PORT` or `unix://PATH`), with `token` as the
/// bearer when given. A refusal (401, 403) is an error here, before anything is sent.
pub async fn connect(url: &str, token: Option<String>) -> Result<Remote, ControlError> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let (target, stream) = if let Some(path) = url.strip_prefix("unix://") {
        let stream = tokio::net::UnixStream::connect(path)
            .await
            .map_err(|_| ControlError::NotRunning(PathBuf::from(path)))?;
        ("ws://localhost/".to_string(), Stream::Unix(stream))
    } else if let Some(address) = url.strip_prefix("ws://") {
        let host = address.split('/').next().unwrap_or(address);
        let stream = tokio::net::TcpStream::connect(host)
            .await
            .map_err(|source| ControlError::Io {
                what: "connecting to the daemon",
                source,
            })?;
        (url.to_string(), Stream::Tcp(stream))
    } else {
        return Err(ControlError::Handshake(format!(
            "unsupported address `{url}`: expected ws://HOST:PORT or unix://PATH"
        )));
    };
    let mut request = target
        .into_client_request()
        .map_err(|error| ControlError::Handshake(error.to_string()))?;
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| ControlError::Handshake("the token is not a valid header".into()))?;
        request.headers_mut().insert("authorization", value);
    }
    let (ws, _) = tokio_tungstenite::client_async(request, stream)
        .await
        .map_err(|error| ControlError::Handshake(error.to_string()))?;
    Ok(Remote(ws))
}

/// Carries newline-delimited messages between `input`/`output` and the connection's text
/// frames: `app-server proxy` on stdio, `exec --remote` on its in-memory pipes. Ends when the
/// daemon closes the connection, or (after the answers to what was sent) when `input` ends.
pub async fn bridge<R, W>(remote: Remote, input: R, mut output: W) -> Result<(), ControlError>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let ws = remote.0;
    let (mut sink, mut frames) = ws.split();
    let upstream = async {
        let mut lines = BufReader::new(input).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            if sink.send(Message::Text(line.into())).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    };
    let downstream = async {
        while let Some(Ok(frame)) = frames.next().await {
            let text = match frame {
                Message::Text(text) => text,
                Message::Close(_) => break,
                _ => continue,
            };
            let written = async {
                output.write_all(text.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
        let _ = output.shutdown().await;
    };
    // A daemon that went away ends the bridge at once; a client whose input ended still gets
    // the answers to what it sent (the daemon closes the connection after them).
    tokio::pin!(downstream);
    tokio::select! {
        _ = &mut downstream => return Ok(()),
        _ = upstream => {}
    }
    downstream.await;
    Ok(())
}

/// A Unix or TCP stream under one type, for the WebSocket client.
pub enum Stream {
    Unix(tokio::net::UnixStream),
    Tcp(tokio::net::TcpStream),
}

impl tokio::io::AsyncRead for Stream {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Unix(s) => std::pin::Pin::new(s).poll_read(cx, buf),
            Stream::Tcp(s) => std::pin::Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Unix(s) => std::pin::Pin::new(s).poll_write(cx, buf),
            Stream::Tcp(s) => std::pin::Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Unix(s) => std::pin::Pin::new(s).poll_flush(cx),
            Stream::Tcp(s) => std::pin::Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Unix(s) => std::pin::Pin::new(s).poll_shutdown(cx),
            Stream::Tcp(s) => std::pin::Pin::new(s).poll_shutdown(cx),
        }
    }
}
