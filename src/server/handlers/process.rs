//! `process/spawn`, `/writeStdin`, `/resizePty` and `/kill` (experimental API, refused without
//! the capability as the reference does): a client's own processes, started by argv on the
//! daemon's host and named by a handle the client picks.
//!
//! A spawn answers as soon as the process runs; a task on the connection's handler tracker then
//! drives it on the one PTY/process layer (`supervisor::spawn_terminal`, the same run loop as
//! `command/exec`) to its end, streams its output as `process/outputDelta` or keeps it, and
//! ends with `process/exited`. The handle is registered for the process's life only (see
//! `server/exec_processes.rs`): a second spawn with a live handle is refused, and once
//! `process/exited` is sent every request naming the handle is refused. The process's tree is
//! the supervisor's, so its timeout, `process/kill`, the connection closing and the daemon's
//! shutdown each kill it with everything it started.
//!
//! Like the reference, no sandbox confines it (the client asked for it in its own name) and its
//! environment is the daemon's with the request's `env` on top, except the variables holding the
//! keys openturn itself uses (a request may still set them).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use tokio::process::Command;

use crate::core::TurnGate;
use crate::protocol::methods::{method, Method};
use crate::protocol::notification::ServerNotification;
use crate::protocol::process::{
    ProcessExitedNotification, ProcessKillParams, ProcessResizePtyParams, ProcessSpawnParams,
    ProcessTerminalSize, ProcessWriteStdinParams,
};
use crate::protocol::turn::EmptyResponse;
use crate::supervisor::{self, Stream, TerminalMode, TerminalSize};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::exec_processes::ExecControl;
use super::exec_run::{drive, Delta, Output};
use super::reply::{After, Reply};

/// Defaults when the client names none (as the reference's).
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

/// The reference's answer to a client without the experimental capability.
fn require_experimental<M: Method>(context: &ServerContext) -> Result<(), HandlerError> {
    if context.connection().experimental_api {
        return Ok(());
    }
    Err(HandlerError::InvalidRequest(format!(
        "{} requires experimentalApi capability",
        M::NAME
    )))
}

async fn spawn(context: &Arc<ServerContext>, params: ProcessSpawnParams) -> Reply<EmptyResponse> {
    match start(context, params).await {
        Ok(gate) => Reply::then(EmptyResponse {}, vec![After::OpenGate(gate)]),
        Err(error) => Reply::plain(Err(error)),
    }
}

/// Checks the request, starts the process and leaves it to its task, which waits for the
/// returned gate (opened once the response is out) before it reports anything.
async fn start(
    context: &Arc<ServerContext>,
    params: ProcessSpawnParams,
) -> Result<TurnGate, HandlerError> {
    require_experimental::<method::ProcessSpawn>(context)?;
    let (timeout, cap) = check_spawn(&params)?;
    let command = build_command(context, &params)?;
    let handle = params.process_handle.clone();
    // Shutdown kills it too: the token is a child of the connection's `handlers_stop`.
    let kill = context.lifecycle.handlers_stop.child_token();
    let stdin = Arc::new(tokio::sync::Mutex::new(None));
    let control = ExecControl {
        stdin: stdin.clone(),
        pty: None,
        kill: kill.clone(),
    };
    if !context.processes.register(&handle, control) {
        return Err(HandlerError::InvalidRequest(format!(
            "duplicate active process handle: {handle:?}"
        )));
    }
    let registration = Registration {
        context: context.clone(),
        handle: handle.clone(),
    };
    let mode =
        match params.tty {
            true => TerminalMode::Tty(params.size.map_or_else(TerminalSize::default, |size| {
                TerminalSize {
                    rows: size.rows,
                    cols: size.cols,
                }
            })),
            false => TerminalMode::Pipes {
                stdin: params.stream_stdin,
            },
        };
    let mut terminal = supervisor::spawn_terminal(command, mode, |_| {})
        .map_err(|error| HandlerError::Internal(format!("failed to spawn process: {error}")))?;
    // A PTY always takes input and streams its output, as the reference's does.
    *stdin.lock().await = terminal.input.take();
    if let Some(pty) = terminal.pty.take() {
        context.processes.set_pty(&handle, pty);
    }
    let streamed = params.stream_stdout_stderr || params.tty;
    let target = streamed.then(|| (context.clone(), Delta::Process(handle.clone())));
    let mut output = Output::new(cap, target);
    let (gate, opened) = tokio::sync::oneshot::channel();
    let context = context.clone();
    context.clone().lifecycle.handlers.spawn(async move {
        // Nothing about the process may overtake the spawn's response.
        let _ = opened.await;
        let exit_code = drive(&mut terminal, &mut output, timeout, &kill).await;
        // The handle is free before the client hears of the exit, so it may spawn it again.
        drop(registration);
        let notification = exited(&handle, exit_code.unwrap_or(-1), output);
        let _ = context.outgoing.send_notification(&notification).await;
    });
    Ok(TurnGate(gate))
}

/// The handle's entry in the connection's processes, removed when dropped (also when the spawn
/// fails after registering it).
struct Registration {
    context: Arc<ServerContext>,
    handle: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.context.processes.remove(&self.handle);
    }
}

fn exited(handle: &str, exit_code: i32, output: Output) -> ServerNotification {
    let stdout_cap_reached = output.cap_reached(Stream::Stdout);
    let stderr_cap_reached = output.cap_reached(Stream::Stderr);
    let output_drain_timed_out = output.drain_timed_out;
    let (stdout, stderr) = output.finish();
    ServerNotification::ProcessExited(ProcessExitedNotification {
        process_handle: handle.to_string(),
        exit_code,
        stdout,
        stdout_cap_reached,
        stderr,
        stderr_cap_reached,
        output_drain_timed_out,
    })
}

/// Refuses what the reference refuses, with its errors; the timeout and the cap the request
/// asks for (absent: the default, `null`: none).
fn check_spawn(
    params: &ProcessSpawnParams,
) -> Result<(Option<Duration>, Option<usize>), HandlerError> {
    if params.command.is_empty() {
        return Err(HandlerError::InvalidRequest(
            "command must not be empty".to_string(),
        ));
    }
    if !Path::new(&params.cwd).is_absolute() {
        return Err(HandlerError::InvalidRequest(format!(
            "cwd must be an absolute path, got {:?}",
            params.cwd
        )));
    }
    if let Some(size) = params.size {
        if !params.tty {
            return Err(HandlerError::InvalidParams(
                "process/spawn size requires tty: true".to_string(),
            ));
        }
        check_size(size)?;
    }
    let timeout = match params.timeout_ms {
        None => Some(Duration::from_millis(DEFAULT_TIMEOUT_MS)),
        Some(None) => None,
        Some(Some(ms)) if ms < 0 => {
            return Err(HandlerError::InvalidParams(format!(
                "process/spawn timeoutMs must be non-negative, got {ms}"
            )))
        }
        Some(Some(ms)) => Some(Duration::from_millis(ms.unsigned_abs())),
    };
    let cap = match params.output_bytes_cap {
        None => Some(DEFAULT_OUTPUT_CAP),
        Some(None) => None,
        Some(Some(cap)) => Some(usize::try_from(cap).unwrap_or(usize::MAX)),
    };
    Ok((timeout, cap))
}

fn check_size(size: ProcessTerminalSize) -> Result<(), HandlerError> {
    if size.rows == 0 || size.cols == 0 {
        return Err(HandlerError::InvalidParams(
            "process size rows and cols must be greater than 0".to_string(),
        ));
    }
    Ok(())
}

/// The argv in `cwd`, with the daemon's environment (less openturn's key variables) and the
/// request's `env` on top.
fn build_command(
    context: &ServerContext,
    params: &ProcessSpawnParams,
) -> Result<Command, HandlerError> {
    let Some((program, args)) = params.command.split_first() else {
        return Err(HandlerError::InvalidRequest(
            "command must not be empty".to_string(),
        ));
    };
    let keys = &context.config.shell_environment.key_variables;
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(name, _)| !keys.iter().any(|key| OsStr::new(key) == name))
        .collect();
    for (key, value) in params.env.iter().flatten() {
        match value {
            Some(value) => env.insert(key.into(), value.into()),
            None => env.remove(OsStr::new(key)),
        };
    }
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(&params.cwd)
        .env_clear()
        .envs(env);
    Ok(command)
}

fn running(context: &ServerContext, handle: &str) -> Result<ExecControl, HandlerError> {
    context.processes.get(handle).ok_or_else(|| {
        HandlerError::InvalidRequest(format!("no active process for process handle {handle:?}"))
    })
}

async fn write_stdin(
    context: &ServerContext,
    params: ProcessWriteStdinParams,
) -> Result<EmptyResponse, HandlerError> {
    require_experimental::<method::ProcessWriteStdin>(context)?;
    if params.delta_base64.is_none() && !params.close_stdin {
        return Err(HandlerError::InvalidParams(
            "process/writeStdin requires deltaBase64 or closeStdin".to_string(),
        ));
    }
    let control = running(context, &params.process_handle)?;
    let bytes = match &params.delta_base64 {
        Some(delta) => base64::engine::general_purpose::STANDARD
            .decode(delta)
            .map_err(|error| {
                HandlerError::InvalidParams(format!("invalid deltaBase64: {error}"))
            })?,
        None => Vec::new(),
    };
    let mut stdin = control.stdin.lock().await;
    let Some(input) = stdin.as_mut() else {
        return Err(HandlerError::InvalidRequest(
            "stdin streaming is not enabled for this process".to_string(),
        ));
    };
    if !bytes.is_empty() {
        input
            .write(bytes)
            .await
            .map_err(|error| HandlerError::InvalidRequest(format!("writing stdin: {error}")))?;
    }
    if params.close_stdin {
        // Dropped: a pipe closes; a PTY gets end-of-file (its line discipline's EOF).
        stdin.take();
    }
    Ok(EmptyResponse {})
}

async fn resize_pty(
    context: &ServerContext,
    params: ProcessResizePtyParams,
) -> Result<EmptyResponse, HandlerError> {
    require_experimental::<method::ProcessResizePty>(context)?;
    let control = running(context, &params.process_handle)?;
    check_size(params.size)?;
    let Some(pty) = control.pty else {
        return Err(HandlerError::InvalidRequest(
            "failed to resize PTY: process is not attached to a PTY".to_string(),
        ));
    };
    let size = TerminalSize {
        rows: params.size.rows,
        cols: params.size.cols,
    };
    tokio::task::spawn_blocking(move || pty.resize(size))
        .await
        .map_err(|error| HandlerError::Internal(error.to_string()))?
        .map_err(|error| HandlerError::InvalidRequest(format!("failed to resize PTY: {error}")))?;
    Ok(EmptyResponse {})
}

async fn kill(
    context: &ServerContext,
    params: ProcessKillParams,
) -> Result<EmptyResponse, HandlerError> {
    require_experimental::<method::ProcessKill>(context)?;
    running(context, &params.process_handle)?.kill.cancel();
    Ok(EmptyResponse {})
}

handler!(ProcessSpawn, |context, params| spawn(context, params).await);
handler!(ProcessWriteStdin, |context, params| write_stdin(
    context, params
)
.await);
handler!(ProcessResizePty, |context, params| resize_pty(
    context, params
)
.await);
handler!(ProcessKill, |context, params| kill(context, params).await);
