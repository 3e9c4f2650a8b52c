//! Shutdown: on stdin EOF or SIGTERM/SIGINT, interrupt running turns (each records its end and
//! emits `turn/completed`), drain notifications, flush rollouts, and exit 0 — bounded in time so
//! a stuck client cannot hold the process.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::context::ServerContext;

/// Total time allowed for a graceful shutdown.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(1800);

/// SIGTERM and SIGINT as one awaitable source.
pub struct TerminationSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl TerminationSignals {
    pub fn new() -> TerminationSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            TerminationSignals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        TerminationSignals {}
    }

    /// Resolves with the signal's name; never resolves when signals are unavailable.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            let term = async {
                match self.term.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            let int = async {
                match self.int.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = term => "SIGTERM",
                _ = int => "SIGINT",
            }
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
