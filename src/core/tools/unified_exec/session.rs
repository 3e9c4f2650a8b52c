//! One running command of the model (`exec_command`) and the task that owns it: its output
//! as it arrives (a delta to the client, a running log for the item, the unread part for the
//! model), its stdin, its exit, and the completion of its one `commandExecution` item.
//!
//! The task ([`drive`]) owns the process: it alone waits for the leader, ends the command's
//! processes ([`crate::supervisor::CommandTree`]) and completes the item. Everyone else talks to
//! the session through [`Session`]: reads what the model has not seen yet, waits for the
//! exit, writes to stdin, or asks the task to kill the command.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Mutex as AsyncMutex;
use tokio_util::sync::CancellationToken;

use crate::supervisor::{Stream, Terminal, TerminalInput};

use super::super::super::event::EventMsg;
use super::super::super::ids::ItemId;
use super::super::super::items::{ToolItemStatus, TurnItem};
use super::super::handle::TurnHandle;
use super::super::process::{exit_code_of, take_utf8};

/// The item keeps at most this much output; the rest is counted but not kept.
const MAX_AGGREGATED_BYTES: usize = 1024 * 1024;
/// What the model has not read yet is kept up to this much; older unread output is dropped
/// (and counted), so a chatty command nobody polls cannot grow the daemon's memory.
const MAX_UNREAD_BYTES: usize = 1024 * 1024;
/// How long a killed leader may take to be reaped (SIGKILL cannot be ignored).
const REAP_LIMIT: Duration = Duration::from_secs(5);

/// Why a session's command is being killed, which decides what its item says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KillReason {
    /// A client terminated it, or the thread's bound evicted it: the item completes as failed,
    /// exit code -1.
    Terminated,
    /// The thread closes or the daemon stops: nobody is left to tell.
    Shutdown,
}

/// What the rest of the daemon sees of a session.
pub(crate) struct Session {
    /// The number the model and the client name it by (`session_id`, `processId`).
    pub id: i32,
    pub item_id: ItemId,
    /// The command line as the model wrote it.
    pub raw_command: String,
    pub cwd: String,
    pub os_pid: Option<u32>,
    state: Mutex<SessionState>,
    input: AsyncMutex<Option<TerminalInput>>,
    kill: CancellationToken,
    /// Cancelled once the command exited and all its output was read.
    ended: CancellationToken,
}

#[derive(Debug, Default)]
struct SessionState {
    unread: String,
    /// Unread bytes dropped by [`MAX_UNREAD_BYTES`] since the model last read.
    unread_dropped: usize,
    exit_code: Option<i32>,
    kill_reason: Option<KillReason>,
    last_used: Option<Instant>,
}

/// What the model reads of a session at one point.
#[derive(Debug)]
pub(crate) struct Collected {
    pub text: String,
    /// All the bytes that arrived since the last read, kept or not.
    pub original_bytes: usize,
    /// `Some` once the command exited.
    pub exit_code: Option<i32>,
}

impl Session {
    pub(crate) fn new(
        id: i32,
        item_id: ItemId,
        raw_command: String,
        cwd: String,
        os_pid: Option<u32>,
        input: Option<TerminalInput>,
    ) -> Session {
        Session {
            id,
            item_id,
            raw_command,
            cwd,
            os_pid,
            state: Mutex::new(SessionState {
                last_used: Some(Instant::now()),
                ..SessionState::default()
            }),
            input: AsyncMutex::new(input),
            kill: CancellationToken::new(),
            ended: CancellationToken::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        // A panic while it was held leaves plain data; keep using it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn has_ended(&self) -> bool {
        self.ended.is_cancelled()
    }

    /// When the model last started or wrote to it: the thread's bound evicts the oldest.
    pub(crate) fn last_used(&self) -> Option<Instant> {
        self.state().last_used
    }

    pub(crate) fn touch(&self) {
        self.state().last_used = Some(Instant::now());
    }

    /// Waits until the command ended or `deadline` passed, or `cancel` fired (`false`).
    pub(crate) async fn wait(&self, deadline: Instant, cancel: &CancellationToken) -> bool {
        tokio::select! {
            _ = self.ended.cancelled() => true,
            _ = tokio::time::sleep_until(deadline.into()) => true,
            _ = cancel.cancelled() => false,
        }
    }

    /// Takes what the model has not read yet, and the exit code once there is one.
    pub(crate) fn collect(&self) -> Collected {
        let mut state = self.state();
        let text = std::mem::take(&mut state.unread);
        let dropped = std::mem::take(&mut state.unread_dropped);
        Collected {
            original_bytes: text.len() + dropped,
            text,
            exit_code: state.exit_code,
        }
    }

    /// Writes to the command's stdin. `Err` with the reason the model is told.
    pub(crate) async fn write(&self, bytes: Vec<u8>) -> Result<(), String> {
        let mut input = self.input.lock().await;
        let Some(stdin) = input.as_mut() else {
            return Err(
                "stdin is closed for this session; rerun exec_command with tty=true to keep \
                 stdin open"
                    .to_string(),
            );
        };
        if self.has_ended() {
            return Err("the process has already exited".to_string());
        }
        stdin
            .write(bytes)
            .await
            .map_err(|error| format!("could not write to the process: {error}"))
    }

    /// Asks the owning task to kill the command. The first reason given is the one kept.
    pub(crate) fn kill(&self, reason: KillReason) {
        self.state().kill_reason.get_or_insert(reason);
        self.kill.cancel();
    }

    fn push_output(&self, text: &str) {
        let mut state = self.state();
        state.unread.push_str(text);
        if state.unread.len() > MAX_UNREAD_BYTES {
            // Keep the newest output: drop from the front, on a character boundary.
            let mut cut = state.unread.len() - MAX_UNREAD_BYTES;
            while !state.unread.is_char_boundary(cut) {
                cut += 1;
            }
            state.unread.drain(..cut);
            state.unread_dropped += cut;
        }
    }
}

/// What the owning task needs beyond the [`Session`]: the process, the turn the item belongs
/// to (its events outlive the turn), and how to show the item.
pub(crate) struct Driven {
    pub terminal: Terminal,
    pub turn: TurnHandle,
    /// The item as it started; completed with the output, exit code and duration.
    pub started_item: TurnItem,
    pub started: Instant,
    /// Kept alive until the command's processes are gone (the sandbox's private TMPDIR).
    pub keep_alive: Box<dyn Send>,
}

/// The owning task: forwards output until the command exited and its streams closed, ends the
/// command's processes, then completes the item (unless the kill reason says not to).
pub(crate) async fn drive(session: Arc<Session>, driven: Driven) {
    let Driven {
        terminal,
        turn,
        started_item,
        started,
        keep_alive,
    } = driven;
    let Terminal {
        mut child,
        mut tree,
        mut output,
        ..
    } = terminal;
    let mut decoders = [Vec::new(), Vec::new()];
    let mut aggregated = String::new();
    let mut exit: Option<Option<i32>> = None;
    let mut streams_open = true;
    let mut killed = false;
    while exit.is_none() || streams_open {
        tokio::select! {
            chunk = output.recv(), if streams_open => match chunk {
                Some((stream, bytes)) => {
                    let pending = &mut decoders[stream_index(stream)];
                    pending.extend_from_slice(&bytes);
                    if let Some(text) = take_utf8(pending) {
                        forward(&session, &turn, &mut aggregated, text).await;
                    }
                }
                None => streams_open = false,
            },
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.ok().and_then(exit_code_of));
                // The command is over when its leader is: what it left running goes now,
                // which also closes the streams it held.
                tree.end().await;
            }
            _ = session.kill.cancelled(), if !killed => {
                killed = true;
                tree.kill().await;
                if exit.is_none() {
                    let status = tokio::time::timeout(REAP_LIMIT, child.wait()).await;
                    exit = Some(status.ok().and_then(Result::ok).and_then(exit_code_of));
                }
                tree.end().await;
            }
        }
    }
    for pending in &mut decoders {
        if !pending.is_empty() {
            let rest = String::from_utf8_lossy(pending).into_owned();
            pending.clear();
            forward(&session, &turn, &mut aggregated, rest).await;
        }
    }
    drop(keep_alive);
    let reason = session.state().kill_reason;
    let exit_code = match reason {
        Some(KillReason::Terminated) => Some(-1),
        _ => exit.flatten(),
    };
    session.state().exit_code = Some(exit_code.unwrap_or(-1));
    if reason != Some(KillReason::Shutdown) {
        complete_item(&turn, started_item, aggregated, exit_code, started).await;
    }
    // Only now: a call waiting for the end answers once the item's completion is among the
    // turn's events, so the response's token usage, recorded after its calls answered, never
    // comes before it (docs/ARCHITECTURE.md §6).
    session.ended.cancel();
}

/// Completes the command's item with its output, exit code and duration.
async fn complete_item(
    turn: &TurnHandle,
    started_item: TurnItem,
    aggregated: String,
    exit_code: Option<i32>,
    started: Instant,
) {
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    if let TurnItem::CommandExecution {
        id,
        command,
        cwd,
        process_id,
        raw_command,
        ..
    } = started_item
    {
        let status = if exit_code == Some(0) {
            ToolItemStatus::Completed
        } else {
            ToolItemStatus::Failed
        };
        turn.item_completed(TurnItem::CommandExecution {
            id,
            command,
            cwd,
            status,
            aggregated_output: Some(aggregated),
            exit_code,
            duration_ms: Some(duration_ms),
            process_id,
            raw_command,
        })
        .await;
    }
}

fn stream_index(stream: Stream) -> usize {
    match stream {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}

async fn forward(session: &Session, turn: &TurnHandle, aggregated: &mut String, text: String) {
    // The client gets every chunk; the item keeps a bounded prefix; the model what it has not
    // read yet.
    if aggregated.len() < MAX_AGGREGATED_BYTES {
        aggregated.push_str(&text);
    }
    session.push_output(&text);
    turn.emit(EventMsg::CommandOutputDelta {
        turn_id: turn.turn_id.clone(),
        item_id: session.item_id.clone(),
        delta: text,
    })
    .await;
}
