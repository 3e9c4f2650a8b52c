//! Shutdown: on stdin EOF, SIGTERM/SIGINT/SIGHUP or a closed stdout, interrupt running turns (each records its end and
//! emits `turn/completed`), drain notifications, flush rollouts, and exit 0 — bounded in time so
//! a stuck client cannot hold the process. [`Lifecycle`] owns every task tracker and stop token of
//! a connection and [`Lifecycle::shut_down`] is the one place that stops them, in the order
//! documented there (and in docs/ARCHITECTURE.md §4).

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::core::ThreadManager;

use super::server_requests::ServerRequests;

/// Total time allowed for a graceful shutdown.
pub(crate) const SHUTDOWN_BUDGET: Duration = Duration::from_millis(1800);

/// How a connection learns that its client went away, other than by EOF on its input.
#[derive(Clone, Default)]
pub(crate) struct ClientEnds {
    /// The client closed stdout: a write failed, or the descriptor reported a hangup.
    pub(crate) output_closed: CancellationToken,
    /// The client closed stdin (its descriptor reported a hangup). Lines it sent before may
    /// still be unread, so the request loop heeds this only while it cannot read because it
    /// waits for room in the outgoing queue.
    pub(crate) input_hung_up: CancellationToken,
}

/// SIGTERM, SIGINT and SIGHUP as one awaitable source.
///
/// SIGHUP is the terminal or the editor that spawned us going away; left to its default action
/// it would kill the process on the spot, with rollouts unflushed and tools (each in a process
/// group of its own, so the hangup does not reach them) left running. It is handled like
/// SIGTERM instead — unless the process started with SIGHUP ignored (`nohup`), which asks for
/// the opposite and is respected.
pub(crate) struct TerminationSignals {
    #[cfg(unix)]
    sources: Vec<(&'static str, tokio::signal::unix::Signal)>,
}

impl TerminationSignals {
    pub(crate) fn new() -> TerminationSignals {
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
    pub(crate) async fn recv(&mut self) -> &'static str {
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

/// A connection's tasks beside the read loop, and the tokens that stop them: every root
/// cancellation token and task tracker of a connection is a field here; every other token is a
/// child of one of them, or belongs to a value whose drop cancels it (a response stream, dropped
/// by its turn). The dispatcher and the writer are joined by handle; everything else a
/// request or a thread starts is on one of the two trackers or under [`Lifecycle::threads_stop`],
/// so nothing outlives the connection.
#[derive(Default)]
pub(crate) struct Lifecycle {
    /// How the client signals that it went away, besides EOF on its input.
    pub(crate) client_ends: ClientEnds,
    /// The root of core's token tree (thread manager → thread → turn, and each thread's MCP
    /// servers). Cancelled at phase 1: every running turn is interrupted.
    pub(crate) threads_stop: CancellationToken,
    /// Request handlers that run beside the dispatcher: concurrent reads, `command/exec`, and a
    /// line's routing cut short by shutdown.
    pub(crate) handlers: TaskTracker,
    /// Cancelled at phase 4: long-running handlers (`command/exec`) stop early.
    pub(crate) handlers_stop: CancellationToken,
    /// The per-thread projection tasks and idle-unload timers.
    pub(crate) projections: TaskTracker,
    /// Cancelled at phase 5, once every turn has ended: projection tasks drain and stop.
    pub(crate) projections_stop: CancellationToken,
    /// Cancelled at phase 3, when shutdown gives up on a client that stopped reading stdout:
    /// projections then drop notifications instead of waiting, so turns can still end and record.
    pub(crate) output_abandoned: CancellationToken,
    /// Cancelled at phase 6: the writer writes what is queued, flushes and ends.
    pub(crate) writer_finish: CancellationToken,
    /// Stops the stdin/stdout hangup watchers (`stdio::watch_stdio`); cancelled by a drop guard
    /// when the connection's serve returns, after every phase, however it returns.
    pub(crate) stdio_watchers_stop: CancellationToken,
}

impl Lifecycle {
    /// Stops the connection, in this order; phases 1 to 5 run within [`SHUTDOWN_BUDGET`], and 6
    /// and 7 run even when it ran out:
    ///
    /// 1. interrupt every turn (`threads_stop`), then answer pending server requests `Cancelled`
    ///    (in the other order a turn could take the missing answer as a refusal and sample again);
    /// 2. wait for the turns (each records and fsyncs its end) and the dispatcher (it answers
    ///    what was queued) together;
    /// 3. at half the budget, abandon the client's output (`output_abandoned`);
    /// 4. stop and wait for the handlers (`handlers_stop`), ending turns that requests queued at
    ///    EOF started meanwhile;
    /// 5. stop and wait for the projections (`projections_stop`): each drains what its thread
    ///    already emitted first;
    /// 6. finish the writer (`writer_finish`) and give it a last 200 ms;
    /// 7. kill what is left of any command's process tree, so no child outlives the daemon.
    pub(crate) async fn shut_down(
        &self,
        threads: &ThreadManager,
        server_requests: &ServerRequests,
        dispatcher: JoinHandle<()>,
        writer: JoinHandle<()>,
    ) {
        // Phase 1.
        self.threads_stop.cancel();
        server_requests.drain();
        let drain = async {
            // Phase 2. The dispatcher ends once the ingress sender is gone (the caller dropped
            // it) and the queue is empty; a client that stopped reading stdout can keep it
            // stuck on a response, which is why the turns do not wait for it.
            let dispatcher_done = async {
                let _ = dispatcher.await;
            };
            // Phase 3: the turns' ends must reach the rollout even if their notifications
            // never reach the client.
            let abandon_output = async {
                tokio::time::sleep(SHUTDOWN_BUDGET / 2).await;
                self.output_abandoned.cancel();
            };
            let turns_and_dispatcher = async {
                tokio::join!(threads.shutdown(), dispatcher_done);
            };
            tokio::pin!(turns_and_dispatcher);
            tokio::select! {
                _ = &mut turns_and_dispatcher => {}
                _ = abandon_output => turns_and_dispatcher.await,
            }
            // Phase 4. The manager again, for threads that requests still queued at EOF loaded
            // meanwhile; turns started after the first call are cancelled at once by the
            // manager's shutdown token.
            self.handlers_stop.cancel();
            threads.shutdown().await;
            self.handlers.close();
            self.handlers.wait().await;
            // Phase 5.
            self.projections_stop.cancel();
            self.projections.close();
            self.projections.wait().await;
        };
        if tokio::time::timeout(SHUTDOWN_BUDGET, drain).await.is_err() {
            tracing::warn!("shutdown budget exceeded; exiting with work still pending");
        }
        // Phase 6.
        self.writer_finish.cancel();
        if tokio::time::timeout(Duration::from_millis(200), writer)
            .await
            .is_err()
        {
            tracing::warn!("stdout writer did not finish in time");
        }
        // Phase 7. Turns and command/exec requests killed their commands as they ended; this
        // catches what is left (a command whose task never got to clean up).
        crate::supervisor::kill_all().await;
    }
}
