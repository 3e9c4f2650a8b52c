//! Running an approved command: the sandbox builds the process, the supervisor starts it as a
//! terminal session of the thread, and the call answers with its output once it exited or
//! `yield_time_ms` passed (with a note when the sandbox seems to have refused it); a command
//! that cannot start completes its item as failed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::invocation::{emit_item, Invocation};
use crate::core::items::{ToolItemStatus, TurnItem};
use crate::core::tools::handle::TurnHandle;
use crate::core::tools::output::ToolOutput;
use crate::core::tools::unified_exec::output::render;
use crate::core::tools::unified_exec::session::{Driven, Session};
use crate::core::tools::unified_exec::{self, MAX_LIVE_SESSIONS};
use crate::supervisor::{self, TerminalMode, TerminalSize};

/// How long a call waits for its command before answering with the output so far, when the
/// model names no `yield_time_ms`; what it names is held within the two bounds below.
const DEFAULT_YIELD_TIME_MS: u64 = 10_000;
const MIN_YIELD_TIME_MS: u64 = 250;
const MAX_YIELD_TIME_MS: u64 = 30_000;

/// Starts the command as a session of the thread and answers once it exited or
/// `yield_time_ms` passed; a command still running then stays alive for `write_stdin`.
pub(super) async fn execute(
    turn: &TurnHandle,
    invocation: &Invocation,
    announced: bool,
) -> Option<ToolOutput> {
    let clock = Instant::now();
    let Some(terminals) = unified_exec::terminals_of(turn) else {
        let error = "this thread keeps no terminal sessions";
        return Some(spawn_failed(turn, invocation, announced, error, clock).await);
    };
    // Built in the daemon; it must outlive the child (in the fallback it owns its TMPDIR), so
    // the session's task keeps it.
    let prepared = match invocation.sandbox.prepare(&invocation.workspace) {
        Ok(prepared) => prepared,
        Err(error) => {
            let error = format!("the sandbox could not be set up: {error}");
            return Some(spawn_failed(turn, invocation, announced, &error, clock).await);
        }
    };
    let flag = if invocation.login { "-lc" } else { "-c" };
    // The sandbox builds the process to spawn (in namespace mode, bwrap in front of the shell),
    // with the environment `shell_environment_policy` gives.
    let command = prepared.command(
        &invocation.shell,
        &[flag, invocation.cmd.as_str()],
        &invocation.cwd,
        invocation.environment.environment(),
    );
    // Without a PTY stdin is closed, as the reference does: only a terminal takes input.
    let mode = if invocation.tty {
        TerminalMode::Tty(TerminalSize::default())
    } else {
        TerminalMode::Pipes { stdin: false }
    };
    // Started by the supervisor, so everything the command starts can be found and killed; the
    // sandbox's hooks run in the child after the supervisor's.
    let mut terminal =
        match supervisor::spawn_terminal(command, mode, |command| prepared.install(command)) {
            Ok(terminal) => terminal,
            Err(error) => {
                let error = error.to_string();
                return Some(spawn_failed(turn, invocation, announced, &error, clock).await);
            }
        };
    let id = terminals.allocate_id();
    let started_item =
        invocation.item_with_process(ToolItemStatus::InProgress, u32::try_from(id).ok());
    if !announced {
        emit_item(turn, &started_item, false).await;
    }
    let session = Arc::new(Session::new(
        id,
        invocation.call_id.clone(),
        invocation.cmd.clone(),
        invocation.cwd.display().to_string(),
        terminal.child.id(),
        terminal.input.take(),
    ));
    let evicted = terminals.add(
        session.clone(),
        Driven {
            terminal,
            turn: turn.clone(),
            started_item,
            started: clock,
            keep_alive: Box::new(prepared),
        },
    );
    let deadline = clock + yield_time(invocation.yield_time_ms);
    let collected = unified_exec::read_after_wait(turn, &terminals, &session, deadline).await?;
    let mut text = invocation.note.clone().unwrap_or_default();
    if let Some(evicted) = evicted {
        text.push_str(&format!(
            "Note: this thread already ran {MAX_LIVE_SESSIONS} sessions, so session {evicted} \
             (the one used least recently) was killed to start this one.\n"
        ));
    }
    if invocation.sandbox.confines()
        && looks_like_sandbox_denial(collected.exit_code, &collected.text)
    {
        text.push_str(&format!(
            "Note: this command ran in the `{}` sandbox and failed with a permission error; the \
             sandbox may have refused it. If it must write outside the writable paths or use the \
             network, ask to run it outside the sandbox (`sandbox_permissions: \
             \"require_escalated\"` with a `justification`).\n",
            invocation.sandbox.name()
        ));
    }
    text.push_str(&render(
        &collected,
        id,
        clock.elapsed(),
        invocation.max_output_tokens,
    ));
    Some(invocation.output(text))
}

/// How long the call waits before it answers with what the command wrote so far.
fn yield_time(asked: Option<u64>) -> Duration {
    Duration::from_millis(
        asked
            .unwrap_or(DEFAULT_YIELD_TIME_MS)
            .clamp(MIN_YIELD_TIME_MS, MAX_YIELD_TIME_MS),
    )
}

/// The command could not start: its item completes as failed, and the model is told why.
async fn spawn_failed(
    turn: &TurnHandle,
    invocation: &Invocation,
    announced: bool,
    error: &str,
    clock: Instant,
) -> ToolOutput {
    if !announced {
        emit_item(turn, &invocation.item(ToolItemStatus::InProgress), false).await;
    }
    let item = TurnItem::CommandExecution {
        id: invocation.call_id.clone(),
        command: invocation.display.clone(),
        cwd: invocation.cwd.display().to_string(),
        status: ToolItemStatus::Failed,
        aggregated_output: Some(String::new()),
        exit_code: None,
        duration_ms: Some(i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX)),
        process_id: None,
        raw_command: invocation.cmd.clone(),
    };
    emit_item(turn, &item, true).await;
    invocation.output(format!("The command could not start: {error}\n"))
}

/// A failed exit whose output carries the errors the sandbox produces (EACCES, EPERM, EROFS).
fn looks_like_sandbox_denial(exit_code: Option<i32>, output: &str) -> bool {
    const DENIALS: &[&str] = &[
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ];
    exit_code.is_some_and(|code| code != 0) && DENIALS.iter().any(|text| output.contains(text))
}
