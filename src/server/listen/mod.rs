//! Serving many connections: `--listen unix://[PATH]` and `--listen ws://IP:PORT` speak the
//! protocol over WebSocket (on a Unix socket or TCP), every connection sharing the daemon's one
//! hub (threads, server requests, lifecycle). The Unix socket lives in a directory only the user
//! can enter (0700) and is itself 0600; a socket left by a daemon that died is replaced, a live
//! one refuses a second daemon; the socket is removed at exit. TCP on an address other than
//! loopback needs `--ws-auth`.

pub mod auth;
mod connection;
pub mod control;
mod handshake;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;

use super::shutdown::{Lifecycle, TerminationSignals};
use auth::WsAuth;
use handshake::Handshake;

/// Where the daemon serves, as `--listen` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddress {
    Stdio,
    Unix(PathBuf),
    Ws(SocketAddr),
    /// No transport: the process has nothing to serve and exits.
    Off,
}

/// Why the daemon could not listen.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error(
        "unsupported --listen `{0}`: expected stdio://, unix://, unix://PATH, ws://IP:PORT or off"
    )]
    Unsupported(String),
    #[error("refusing to start non-loopback websocket listener {0} without auth; configure `--ws-auth capability-token` or `--ws-auth signed-bearer-token`")]
    NonLoopbackWithoutAuth(SocketAddr),
    #[error("another openturn daemon is already listening on {0}")]
    AlreadyRunning(PathBuf),
    #[error("the socket path {0} is too long for a Unix socket (at most 107 bytes)")]
    PathTooLong(PathBuf),
    #[error("cannot listen on {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Core(#[from] crate::core::CoreError),
}

impl ListenAddress {
    /// Parses a `--listen` value; `unix://` alone is the default socket under `home`.
    pub fn parse(value: &str, home: &Path) -> Result<ListenAddress, ListenError> {
        let unsupported = || ListenError::Unsupported(value.to_string());
        if value == "stdio://" || value == "stdio" {
            return Ok(ListenAddress::Stdio);
        }
        if value == "off" {
            return Ok(ListenAddress::Off);
        }
        if let Some(path) = value.strip_prefix("unix://") {
            return Ok(ListenAddress::Unix(if path.is_empty() {
                default_socket(home)
            } else {
                PathBuf::from(path)
            }));
        }
        if let Some(address) = value.strip_prefix("ws://") {
            let address = address.trim_end_matches('/');
            return address
                .parse()
                .map(ListenAddress::Ws)
                .map_err(|_| unsupported());
        }
        Err(unsupported())
    }
}

/// The socket `unix://` and `app-server daemon` use.
pub fn default_socket(home: &Path) -> PathBuf {
    home.join("app-server-control")
        .join("app-server-control.sock")
}

/// Serves `address` (a Unix socket or TCP) until a termination signal, then shuts the daemon
/// down as the stdio daemon does: turns end and record, connections get their last lines.
pub async fn run(config: Config, address: ListenAddress, auth: WsAuth) -> Result<(), ListenError> {
    let listener = match &address {
        ListenAddress::Unix(path) => Listener::Unix(bind_unix(path)?),
        ListenAddress::Ws(addr) => {
            if !addr.ip().is_loopback() && auth.is_none() {
                return Err(ListenError::NonLoopbackWithoutAuth(*addr));
            }
            let tcp = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| ListenError::Io {
                    what: addr.to_string(),
                    source,
                })?;
            Listener::Tcp(tcp)
        }
        ListenAddress::Stdio | ListenAddress::Off => return Ok(()),
    };
    let _remove_socket = SocketFile(match &address {
        ListenAddress::Unix(path) => Some(path.clone()),
        _ => None,
    });
    announce(&listener, &address);
    let hub = super::new_hub(&config, Lifecycle::default())?;
    let connections = TaskTracker::new();
    let stop = CancellationToken::new();
    let mut signals = TerminationSignals::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            signal = signals.recv() => {
                tracing::info!(signal, "stopping the listener");
                break;
            }
        };
        let stream = match accepted {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%error, "accept failed");
                continue;
            }
        };
        let (hub, config, auth, stop) = (hub.clone(), config.clone(), auth.clone(), stop.clone());
        connections.spawn(async move {
            match stream {
                Accepted::Unix(stream) => serve_stream(hub, config, &auth, stream, stop).await,
                Accepted::Tcp(stream) => serve_stream(hub, config, &auth, stream, stop).await,
            }
        });
    }
    drop(listener);
    stop.cancel();
    connections.close();
    let lifecycle = hub.lifecycle.clone();
    // Connections end their dispatchers as they see `stop`; the writers end once shutdown
    // finishes them (phase 6), which is what the "writer" below waits for.
    let dispatchers = tokio::spawn(async {});
    let writers = tokio::spawn(async move { connections.wait().await });
    lifecycle
        .shut_down(&hub.threads, &hub.server_requests, dispatchers, writers)
        .await;
    Ok(())
}

async fn serve_stream<S>(
    hub: std::sync::Arc<super::hub::Hub>,
    config: Config,
    auth: &WsAuth,
    mut stream: S,
    stop: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    match handshake::handshake(&mut stream, auth).await {
        Ok(Handshake::Upgraded { leftover }) => {
            connection::serve(hub, config, stream, leftover, stop).await
        }
        Ok(Handshake::Answered) => {}
        Err(error) => tracing::debug!(%error, "handshake failed"),
    }
}

enum Listener {
    Unix(tokio::net::UnixListener),
    Tcp(tokio::net::TcpListener),
}

enum Accepted {
    Unix(tokio::net::UnixStream),
    Tcp(tokio::net::TcpStream),
}

impl Listener {
    async fn accept(&self) -> std::io::Result<Accepted> {
        match self {
            Listener::Unix(listener) => listener.accept().await.map(|(s, _)| Accepted::Unix(s)),
            Listener::Tcp(listener) => listener.accept().await.map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Accepted::Tcp(s)
            }),
        }
    }
}

/// Says where the daemon listens, on stderr (the log), once it is ready to accept.
fn announce(listener: &Listener, address: &ListenAddress) {
    let url = match (listener, address) {
        (Listener::Tcp(tcp), _) => tcp
            .local_addr()
            .map(|addr| format!("ws://{addr}"))
            .unwrap_or_default(),
        (_, ListenAddress::Unix(path)) => format!("unix://{}", path.display()),
        _ => String::new(),
    };
    eprintln!("openturn app-server (WebSockets)\n  listening on: {url}");
}

/// Binds the Unix socket at `path`: the directory is made private, a stale socket replaced, a
/// live one left alone (another daemon owns it).
fn bind_unix(path: &Path) -> Result<tokio::net::UnixListener, ListenError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |source| ListenError::Io {
        what: path.display().to_string(),
        source,
    };
    if path.as_os_str().len() > 107 {
        return Err(ListenError::PathTooLong(path.to_path_buf()));
    }
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    }
    if std::fs::symlink_metadata(path).is_ok() {
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => return Err(ListenError::AlreadyRunning(path.to_path_buf())),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => {
                tracing::info!(path = %path.display(), "replacing a stale socket");
                std::fs::remove_file(path).map_err(io)?;
            }
            Err(error) => return Err(io(error)),
        }
    }
    let listener = tokio::net::UnixListener::bind(path).map_err(io)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    Ok(listener)
}

/// Removes the socket file when the listener is done with it.
struct SocketFile(Option<PathBuf>);

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_values_parse_as_the_reference_spells_them() {
        let home = Path::new("/h");
        let parse = |value| ListenAddress::parse(value, home).ok();
        assert_eq!(parse("stdio://"), Some(ListenAddress::Stdio));
        assert_eq!(parse("off"), Some(ListenAddress::Off));
        assert_eq!(
            parse("unix://"),
            Some(ListenAddress::Unix(default_socket(home)))
        );
        assert_eq!(
            parse("unix:///tmp/s"),
            Some(ListenAddress::Unix(PathBuf::from("/tmp/s")))
        );
        assert!(matches!(
            parse("ws://127.0.0.1:0"),
            Some(ListenAddress::Ws(_))
        ));
        assert_eq!(parse("tcp://x"), None);
        assert_eq!(parse("ws://localhost:1"), None);
    }
}
