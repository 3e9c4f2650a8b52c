//! Shutdown: on stdin EOF, SIGTERM/SIGINT/SIGHUP or a closed stdout, interrupt running turns (each records its end and
//! emits `turn/completed`), drain notifications, flush rollouts, and exit 0 — bounded in time so
//! a stuck client cannot hold the process.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::context::ServerContext;

/// Total time allowed for a graceful shutdown.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(1800);

/// How a connection learns that its client went away, other than by EOF on its input.
#[derive(Clone, Default)]
pub struct ClientEnds {
    /// The client closed stdout: a write failed, or the descriptor reported a hangup.
    pub output_closed: CancellationToken,
    /// The client closed stdin (its descriptor reported a hangup). Lines it sent before may
    /// still be unread, so the request loop heeds this only while it cannot read because it
    /// waits for room in the outgoing queue.
    pub input_hung_up: CancellationToken,
}

/// SIGTERM, SIGINT and SIGHUP as one awaitable source.
///
/// SIGHUP is the terminal or the editor that spawned us going away; left to its default action
/// it would kill the process on the spot, with rollouts unflushed and tools (each in a process
/// group of its own, so the hangup does not reach them) left running. It is handled like
/// SIGTERM instead — unless the process started with SIGHUP ignored (`nohup`), which asks for
/// the opposite and is respected.
pub struct TerminationSignals {
    #[cfg(unix)]
    sources: Vec<(&'static str, tokio::signal::unix::Signal)>,
}

impl TerminationSignals {
    pub fn new() -> TerminationSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let wanted = [
                ("SIGTERM", SignalKind::terminate()),
                ("SIGINT", SignalKind::interrupt()),
                ("SIGHUP", SignalKind::hangup()),
            ];
            let sources = wanted
                .into_iter()
                .filter(|(name, _)| *name != "SIGHUP" || !hangup_ignored_at_start())
                .filter_map(|(name, kind)| signal(kind).ok().map(|source| (name, source)))
                .collect();
            TerminationSignals { sources }
        }
        #[cfg(not(unix))]
        TerminationSignals {}
    }

    /// Resolves with the signal's name; never resolves when signals are unavailable.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            std::future::poll_fn(|cx| {
                for (name, source) in self.sources.iter_mut() {
                    if source.poll_recv(cx).is_ready() {
                        return std::task::Poll::Ready(*name);
                    }
                }
                std::task::Poll::Pending
            })
            .await
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}

impl Default for TerminationSignals {
    fn default() -> Self {
        TerminationSignals::new()
    }
}

/// Whether SIGHUP was ignored when the process started (`nohup openturn …`). Asked before any
/// handler of ours is installed, so the answer is the parent's choice.
#[cfg(unix)]
fn hangup_ignored_at_start() -> bool {
    // SAFETY: a zeroed sigaction is a valid out-parameter; a null new action only reads the
    // current disposition.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

/// Ends turns, drains notifications and the writer, within [`SHUTDOWN_BUDGET`].
pub async fn graceful(
    context: Arc<ServerContext>,
    dispatcher: JoinHandle<()>,
    writer: JoinHandle<()>,
    writer_finish: CancellationToken,
) {
    // The client is gone or going. Interrupt the turns first, then answer their pending requests
    // `Cancelled`: in the other order a turn could take the unanswered request as a plain refusal,
    // sample again and complete before the interruption reached it.
    context.threads.interrupt_all();
    context.server_requests.drain();
    let drain = async {
        // Interrupt turns while the dispatcher drains, not after: a client that stopped reading
        // stdout can keep the dispatcher stuck on a response, and the turns must still record
        // their end and be fsynced within the budget. The dispatcher ends once the ingress
        // sender is gone (the caller dropped it) and the queue is empty.
        let dispatcher_done = async {
            let _ = dispatcher.await;
        };
        // Past half the budget, stop waiting on the client's output: the turns' ends must reach
        // the rollout even if their notifications never reach the client.
        let abandon_output = async {
            tokio::time::sleep(SHUTDOWN_BUDGET / 2).await;
            context.output_abandoned.cancel();
        };
        let turns_and_dispatcher = async {
            tokio::join!(context.threads.shutdown(), dispatcher_done);
        };
        tokio::pin!(turns_and_dispatcher);
        tokio::select! {
            _ = &mut turns_and_dispatcher => {}
            _ = abandon_output => turns_and_dispatcher.await,
        }
        context.handlers_stop.cancel();
        // Again, for threads that requests still queued at EOF loaded meanwhile; turns started
        // after the first call are cancelled at once by the manager's shutdown token.
        context.threads.shutdown().await;
        context.handlers.close();
        context.handlers.wait().await;
        context.projections_stop.cancel();
        context.projections.close();
        context.projections.wait().await;
    };
    if tokio::time::timeout(SHUTDOWN_BUDGET, drain).await.is_err() {
        tracing::warn!("shutdown budget exceeded; exiting with work still pending");
    }
    writer_finish.cancel();
    if tokio::time::timeout(Duration::from_millis(200), writer)
        .await
        .is_err()
    {
        tracing::warn!("stdout writer did not finish in time");
    }
}
