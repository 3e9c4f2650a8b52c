//! A client's command from its start to its end, shared by `command/exec` and `process/spawn`:
//! [`drive`] forwards its output until it exits (or its timeout or a kill ends it, with
//! everything it started), and [`Output`] keeps or streams that output within its cap.
//!
//! Output beyond the cap is read and dropped, so the command never blocks on a full pipe. Once
//! the command's leader exits, whatever it left running is killed with it; output that still
//! arrives is taken for at most [`OUTPUT_GRACE_AFTER_EXIT`], after which the readers stop and
//! the drain counts as timed out.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use tokio_util::sync::CancellationToken;

use crate::protocol::notification::{CommandExecOutputDeltaNotification, ServerNotification};
use crate::protocol::process::{ProcessOutputDeltaNotification, ProcessOutputStream};
use crate::supervisor::{Stream, Terminal};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The conventional exit code of a command killed by a timeout.
pub(super) const TIMEOUT_EXIT_CODE: i32 = 124;
/// How long output may keep arriving after the child exits (from processes it left behind that
/// still hold its pipes) before the readers stop.
const OUTPUT_GRACE_AFTER_EXIT: Duration = Duration::from_secs(2);

/// Forwards output until the command exited and its streams closed (at most
/// [`OUTPUT_GRACE_AFTER_EXIT`] after the exit), killing it at its timeout or when `kill` fires.
pub(super) async fn drive(
    terminal: &mut Terminal,
    output: &mut Output,
    timeout: Option<Duration>,
    kill: &CancellationToken,
) -> Result<i32, HandlerError> {
    let deadline = async {
        match timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut exit: Option<Result<i32, HandlerError>> = None;
    let mut open = true;
    // Once the leader is gone, output may keep coming a short while from what it left behind.
    let mut grace: Option<tokio::time::Instant> = None;
    while exit.is_none() || open {
        let grace_end = grace.unwrap_or_else(tokio::time::Instant::now);
        tokio::select! {
            chunk = terminal.output.recv(), if open => match chunk {
                Some((stream, bytes)) => output.push(stream, &bytes).await,
                None => open = false,
            },
            status = terminal.child.wait(), if exit.is_none() => {
                exit = Some(status.map(|status| exit_code(&status)).map_err(wait_failed));
                // Whatever the command left running goes with it (and the streams it held).
                terminal.tree.end().await;
            }
            () = &mut deadline, if exit.is_none() => {
                // Timed out: the exit code is the timeout's, whatever the kill left.
                let _ = end_now(terminal).await;
                exit = Some(Ok(TIMEOUT_EXIT_CODE));
            }
            () = kill.cancelled(), if exit.is_none() => {
                exit = Some(end_now(terminal).await);
            }
            () = tokio::time::sleep_until(grace_end), if grace.is_some() => {
                output.drain_timed_out = true;
                break;
            }
        }
        if exit.is_some() && grace.is_none() {
            grace = Some(tokio::time::Instant::now() + OUTPUT_GRACE_AFTER_EXIT);
        }
    }
    exit.unwrap_or(Ok(TIMEOUT_EXIT_CODE))
}

/// Kills the command and everything it started, and reaps its leader.
async fn end_now(terminal: &mut Terminal) -> Result<i32, HandlerError> {
    terminal.tree.kill().await;
    let status = terminal.child.wait().await;
    terminal.tree.end().await;
    status.map(|status| exit_code(&status)).map_err(wait_failed)
}

fn wait_failed(error: std::io::Error) -> HandlerError {
    HandlerError::Internal(format!("waiting for the command: {error}"))
}

/// The exit code as a shell reports it: 128 + the signal for a command a signal ended.
fn exit_code(status: &std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    status.code().unwrap_or(-1)
}

/// Where streamed output goes: the notification of the method that started the command, named
/// by the id the client gave it.
pub(super) enum Delta {
    /// `command/exec/outputDelta`, by `processId`.
    CommandExec(String),
    /// `process/outputDelta`, by `processHandle`.
    Process(String),
}

impl Delta {
    fn notification(&self, stream: Stream, bytes: &[u8], cap_reached: bool) -> ServerNotification {
        let delta_base64 = base64::engine::general_purpose::STANDARD.encode(bytes);
        match self {
            Delta::CommandExec(process_id) => {
                ServerNotification::CommandExecOutputDelta(CommandExecOutputDeltaNotification {
                    process_id: process_id.clone(),
                    stream: match stream {
                        Stream::Stdout => "stdout",
                        Stream::Stderr => "stderr",
                    }
                    .to_string(),
                    delta_base64,
                    cap_reached,
                })
            }
            Delta::Process(handle) => {
                ServerNotification::ProcessOutputDelta(ProcessOutputDeltaNotification {
                    process_handle: handle.clone(),
                    stream: match stream {
                        Stream::Stdout => ProcessOutputStream::Stdout,
                        Stream::Stderr => ProcessOutputStream::Stderr,
                    },
                    delta_base64,
                    cap_reached,
                })
            }
        }
    }
}

/// A command's output on its way out: streamed as deltas (base64) or kept for the final
/// answer, at most `cap` bytes per stream either way; the rest is read and dropped, so the
/// command never blocks on a full pipe.
pub(super) struct Output {
    cap: Option<usize>,
    target: Option<(Arc<ServerContext>, Delta)>,
    kept: [Vec<u8>; 2],
    total: [usize; 2],
    /// Set by [`drive`] when it stopped reading before the streams reached their end.
    pub(super) drain_timed_out: bool,
}

impl Output {
    pub(super) fn new(cap: Option<usize>, target: Option<(Arc<ServerContext>, Delta)>) -> Output {
        Output {
            cap,
            target,
            kept: [Vec::new(), Vec::new()],
            total: [0, 0],
            drain_timed_out: false,
        }
    }

    async fn push(&mut self, stream: Stream, bytes: &[u8]) {
        let index = stream_index(stream);
        let total = self.total[index];
        let room = self.cap.map_or(bytes.len(), |cap| {
            cap.saturating_sub(total).min(bytes.len())
        });
        self.total[index] = total + bytes.len();
        if room == 0 {
            return;
        }
        let cap_reached = self.cap.is_some_and(|cap| self.total[index] >= cap);
        match &self.target {
            Some((context, delta)) => {
                let delta = delta.notification(stream, &bytes[..room], cap_reached);
                // A client gone away reads nothing; the command still runs to its end.
                let _ = context.outgoing.send_notification(&delta).await;
            }
            None => self.kept[index].extend_from_slice(&bytes[..room]),
        }
    }

    /// Whether `stream` produced output that the cap cut (or filled exactly).
    pub(super) fn cap_reached(&self, stream: Stream) -> bool {
        let total = self.total[stream_index(stream)];
        self.cap.is_some_and(|cap| total > 0 && total >= cap)
    }

    /// The kept stdout and stderr (empty when streamed), as text.
    pub(super) fn finish(self) -> (String, String) {
        let [stdout, stderr] = self.kept;
        (
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        )
    }
}

fn stream_index(stream: Stream) -> usize {
    match stream {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}
