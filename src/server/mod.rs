//! The daemon: stdio framing, the connection's handshake state, request dispatch, the projection
//! of core events into notifications, and shutdown.
//!
//! Only this layer knows JSON-RPC. It talks to `core` for threads and turns and never sees wire
//! types.

pub(crate) mod agents;
pub(crate) mod context;
pub(crate) mod convert;
pub(crate) mod dispatch;
pub(crate) mod errors;
pub(crate) mod exec_processes;
pub(crate) mod fanout;
pub(crate) mod file_roots;
pub(crate) mod file_search;
pub(crate) mod fs_watch;
pub(crate) mod handlers;
pub(crate) mod history;
pub(crate) mod hub;
pub mod listen;
pub(crate) mod member;
pub(crate) mod outgoing;
pub(crate) mod projection;
pub mod schema;
pub(crate) mod server_requests;
pub(crate) mod shutdown;
pub mod stdio;
pub(crate) mod thread_status;
pub(crate) mod turn_builder;
pub(crate) mod unload;
pub(crate) mod ws_frames;

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;

use crate::config::Config;
use crate::core::{CoreError, ThreadManager};

use context::ServerContext;
use outgoing::{OutgoingSender, OUTGOING_CAPACITY};

/// What a daemon process does once, before it serves: it shields itself from the commands it
/// will confine (see `sandbox::shield_daemon`) and starts deciding how they are isolated. The
/// namespace check (which starts a process) runs beside the daemon, so `initialize` does not
/// wait for it; every confined command does.
pub fn prepare_daemon(config: &Config) {
    crate::sandbox::shield_daemon();
    crate::core::sandboxing::probe_isolation(config.sandbox_isolation);
}

/// Serves one connection on stdin/stdout until EOF or a termination signal.
/// The descriptors are watched for the client closing them, so a client that goes away is
/// noticed even while nothing is read or written.
pub async fn run_stdio(config: Config) -> Result<(), CoreError> {
    let lifecycle = shutdown::Lifecycle::default();
    #[cfg(unix)]
    stdio::watch_stdio(
        &lifecycle.client_ends.input_hung_up,
        &lifecycle.client_ends.output_closed,
        &lifecycle.stdio_watchers_stop,
    );
    serve_connection(
        config,
        tokio::io::stdin(),
        stdio::stdout_writer(),
        lifecycle,
    )
    .await
}

/// Serves one connection over any byte streams.
pub async fn serve<R, W>(config: Config, input: R, output: W) -> Result<(), CoreError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_connection(config, input, output, shutdown::Lifecycle::default()).await
}

async fn serve_connection<R, W>(
    config: Config,
    input: R,
    output: W,
    lifecycle: shutdown::Lifecycle,
) -> Result<(), CoreError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let _stop_stdio_watchers = lifecycle.stdio_watchers_stop.clone().drop_guard();
    let output_closed = lifecycle.client_ends.output_closed.clone();
    let (lines_tx, lines_rx) = mpsc::channel(OUTGOING_CAPACITY);
    let writer = tokio::spawn(stdio::run_writer(
        output,
        lines_rx,
        output_closed.clone(),
        lifecycle.writer_finish.clone(),
    ));
    let max_line_bytes = config.max_line_bytes;
    let hub = new_hub(&config, lifecycle)?;
    let context = ServerContext::connect(&hub, config, OutgoingSender::new(lines_tx));
    let (ingress_tx, ingress_rx) = mpsc::channel(context.config.ingress_queue_capacity);
    let dispatcher = tokio::spawn(dispatch::run_dispatcher(context.clone(), ingress_rx));
    let reader = stdio::LineReader::new(BufReader::new(input), max_line_bytes);
    let ends = context.lifecycle.client_ends.clone();
    let reason = dispatch::read_loop(&context, reader, ingress_tx, ends).await;
    match &reason {
        dispatch::StopReason::StdinError(error) => {
            tracing::warn!(%error, "stdin failed; shutting down")
        }
        other => tracing::info!(reason = ?other, "connection input ended; shutting down"),
    }
    // The client is gone: nothing should keep watching, searching or running on its behalf.
    context.processes.kill_all();
    context.fs_watches.stop_all();
    context.file_searches.stop_all();
    context
        .lifecycle
        .shut_down(
            &context.threads,
            &context.server_requests,
            dispatcher,
            writer,
        )
        .await;
    Ok(())
}

/// The state a daemon's connections share, with `lifecycle` as the daemon's.
pub(crate) fn new_hub(
    config: &Config,
    lifecycle: shutdown::Lifecycle,
) -> Result<Arc<hub::Hub>, CoreError> {
    let threads = ThreadManager::new(config.home.clone(), lifecycle.threads_stop.child_token())?;
    let server_requests =
        server_requests::ServerRequests::new(server_requests::SERVER_REQUEST_TIMEOUT);
    let hub = hub::Hub::new(threads, server_requests, Arc::new(lifecycle));
    // The thread manager spawns sub-agents this hub projects.
    agents::enable(&hub);
    Ok(hub)
}
