//! `command/exec`: runs an argv outside any thread and answers with its exit code and output.
//!
//! Runs on its own task (a long command never holds up other requests). The child's process tree
//! is the supervisor's (`crate::supervisor`), so when it exits, times out (exit code 124) or
//! shutdown begins, everything it started is killed — even what left its process group — and
//! its pipes close. Output beyond the cap is read and discarded, so the child never blocks on a full
//! pipe. With `processId` + `streamStdoutStderr`, output goes out as `command/exec/outputDelta`
//! notifications and the final buffers are empty.
//!
//! The pipe readers belong to the request: a [`JoinSet`] owned by its task, stopped by a child of
//! the connection's `handlers_stop` token. They end when the child's pipes close, when shutdown
//! begins, or — if something the child left behind still holds a pipe open — a short grace after
//! the child exits; dropping the request's task aborts any that remain. No reader outlives it.
//!
//! The environment is what `shell_environment_policy` gives (provider keys stripped, see
//! `core::shell_env`), with the request's `env` on top.
//!
//! `sandboxPolicy`: the request is the client's own decision to run the command, so nothing is
//! asked; the command runs under the policy it names, or the configured `sandbox_mode` when it
//! names none. `readOnly` and `workspaceWrite` (with its `writableRoots` and `networkAccess`) run
//! confined by the sandbox (`docs/SANDBOX.md`), with openturn's home never writable; where the
//! kernel cannot enforce them the request is refused with -32602 rather than run unconfined
//! behind the client's back. `dangerFullAccess` and `externalSandbox` (the client confines the
//! daemon itself) run unconfined.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::core::CommandSandbox;
use crate::protocol::command::{CommandExecParams, CommandExecResponse};
use crate::protocol::common::SandboxPolicy;
use crate::protocol::notification::{CommandExecOutputDeltaNotification, ServerNotification};
use crate::sandbox::{PreparedSandbox, SandboxError};
use crate::supervisor::{
    self, PtyHandle, Stream, Terminal, TerminalInput, TerminalMode, TerminalSize,
};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::super::exec_processes::ExecControl;

/// Defaults when the client names none.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;
/// The conventional exit code of a command killed by a timeout.
const TIMEOUT_EXIT_CODE: i32 = 124;
/// How long output may keep arriving after the child exits (from processes it left behind that
/// still hold its pipes) before the readers stop.
const OUTPUT_GRACE_AFTER_EXIT: Duration = Duration::from_secs(2);

/// `command/exec`: runs the command to its end. It may take minutes, so `handlers::handle` runs
/// it on a task of its own; its one response is sent when the command is over.
pub(crate) async fn command_exec(
    context: &Arc<ServerContext>,
    params: CommandExecParams,
) -> Result<CommandExecResponse, HandlerError> {
    run(context, params).await
}

async fn run(
    context: &Arc<ServerContext>,
    params: CommandExecParams,
) -> Result<CommandExecResponse, HandlerError> {
    let process_id = check_params(&params)?;
    let cwd = match &params.cwd {
        Some(cwd) => std::path::absolute(cwd),
        None => std::env::current_dir(),
    }
    .map_err(|e| HandlerError::InvalidParams(format!("`cwd` cannot be resolved: {e}")))?;
    // Built here; kept until the command is over (in the fallback it owns its TMPDIR).
    let prepared = prepare_sandbox(context, &params, &cwd)?;
    let command = build_command(context, &prepared, &params, &cwd)?;
    let program = params.command.first().map_or("", String::as_str);
    // Shutdown kills it too: the token is a child of the connection's `handlers_stop`.
    let kill = context.lifecycle.handlers_stop.child_token();
    let stdin = Arc::new(tokio::sync::Mutex::new(None));
    let registration = match &process_id {
        Some(id) => Some(Registration::new(context, id, stdin.clone(), kill.clone())?),
        None => None,
    };
    let mode = match (params.tty, params.size) {
        (true, size) => {
            TerminalMode::Tty(
                size.map_or_else(TerminalSize::default, |size| TerminalSize {
                    rows: size.rows,
                    cols: size.cols,
                }),
            )
        }
        (false, _) => TerminalMode::Pipes {
            stdin: params.stream_stdin,
        },
    };
    let mut terminal =
        supervisor::spawn_terminal(command, mode, |command| prepared.install(command))
            .map_err(|e| HandlerError::InvalidRequest(format!("failed to run `{program}`: {e}")))?;
    *stdin.lock().await = terminal.input.take();
    if let (Some(registration), Some(pty)) = (&registration, terminal.pty.take()) {
        registration.set_pty(pty);
    }
    let cap = (!params.disable_output_cap).then(|| {
        params
            .output_bytes_cap
            .map_or(DEFAULT_OUTPUT_CAP, |c| c as usize)
    });
    let timeout = (!params.disable_timeout).then(|| {
        Duration::from_millis(
            params
                .timeout_ms
                .map_or(DEFAULT_TIMEOUT_MS, |t| t.max(0) as u64),
        )
    });
    // A PTY's output always streams, as the reference does; pipes only when asked.
    let target = process_id
        .filter(|_| params.stream_stdout_stderr || params.tty)
        .map(|id| (context.clone(), id));
    let streamed = target.is_some();
    let mut output = Output::new(cap, target);
    let exit_code = drive(&mut terminal, &mut output, timeout, &kill).await;
    drop(registration);
    drop(prepared);
    let (stdout, stderr) = output.finish();
    Ok(CommandExecResponse {
        exit_code: exit_code?,
        stdout: if streamed { String::new() } else { stdout },
        stderr: if streamed { String::new() } else { stderr },
    })
}

/// Refuses what command/exec cannot do, with the reference's errors; the process id the
/// client gave, if any.
fn check_params(params: &CommandExecParams) -> Result<Option<String>, HandlerError> {
    if params.command.is_empty() {
        return Err(HandlerError::InvalidParams(
            "command must not be empty".to_string(),
        ));
    }
    if params.size.is_some() && !params.tty {
        return Err(HandlerError::InvalidParams(
            "command/exec size requires tty: true".to_string(),
        ));
    }
    if params.timeout_ms.is_some() && params.disable_timeout {
        return Err(HandlerError::InvalidParams(
            "command/exec cannot set both timeoutMs and disableTimeout".to_string(),
        ));
    }
    if params.output_bytes_cap.is_some() && params.disable_output_cap {
        return Err(HandlerError::InvalidParams(
            "command/exec cannot set both outputBytesCap and disableOutputCap".to_string(),
        ));
    }
    let interactive = params.tty || params.stream_stdin || params.stream_stdout_stderr;
    if interactive && params.process_id.is_none() {
        return Err(HandlerError::InvalidRequest(
            "command/exec tty or streaming requires a client-supplied processId".to_string(),
        ));
    }
    Ok(params.process_id.clone())
}

/// The process id's entry in the connection's running commands, removed when dropped.
struct Registration {
    context: Arc<ServerContext>,
    process_id: String,
}

impl Registration {
    fn new(
        context: &Arc<ServerContext>,
        process_id: &str,
        stdin: Arc<tokio::sync::Mutex<Option<TerminalInput>>>,
        kill: CancellationToken,
    ) -> Result<Registration, HandlerError> {
        let control = ExecControl {
            stdin,
            pty: None,
            kill,
        };
        if !context.exec_processes.register(process_id, control) {
            return Err(HandlerError::InvalidRequest(format!(
                "duplicate active command/exec process id: {process_id:?}"
            )));
        }
        Ok(Registration {
            context: context.clone(),
            process_id: process_id.to_string(),
        })
    }

    fn set_pty(&self, pty: PtyHandle) {
        self.context.exec_processes.set_pty(&self.process_id, pty);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.context.exec_processes.remove(&self.process_id);
    }
}

/// Forwards output until the command exited and its streams closed (at most
/// [`OUTPUT_GRACE_AFTER_EXIT`] after the exit), killing it at its timeout or when `kill` fires.
async fn drive(
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
            () = tokio::time::sleep_until(grace_end), if grace.is_some() => break,
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

/// The child, built by the sandbox (in namespace mode, bwrap in front of the program): the
/// requested cwd, and the environment `shell_environment_policy` gives
/// with the request's `env` on top. [`supervisor::spawn_terminal`] wires its stdio, gives it its
/// own process group (or, with a PTY, session) and tracks what it starts.
fn build_command(
    context: &ServerContext,
    prepared: &PreparedSandbox,
    params: &CommandExecParams,
    cwd: &Path,
) -> Result<Command, HandlerError> {
    let Some((program, args)) = params.command.split_first() else {
        return Err(HandlerError::InvalidParams(
            "command must not be empty".to_string(),
        ));
    };
    let mut env: BTreeMap<OsString, OsString> = context
        .config
        .shell_environment
        .environment()
        .into_iter()
        .collect();
    for (key, value) in params.env.iter().flatten() {
        match value {
            Some(value) => env.insert(key.into(), value.into()),
            None => env.remove(OsStr::new(key)),
        };
    }
    Ok(prepared.command(program, args, cwd, env))
}

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

/// The confinement the request's `sandboxPolicy` (or the configured `sandbox_mode`) asks for;
/// refused with -32602 when this kernel cannot enforce it.
fn prepare_sandbox(
    context: &ServerContext,
    params: &CommandExecParams,
    cwd: &Path,
) -> Result<PreparedSandbox, HandlerError> {
    let home = super::thread::protected_home(&context.config);
    let (named, sandbox) = match &params.sandbox_policy {
        Some(policy) => {
            let (mode, roots, network_access) = convert::sandbox_policy_in(policy);
            let name = match policy {
                SandboxPolicy::ReadOnly { .. } => "readOnly",
                SandboxPolicy::WorkspaceWrite { .. } => "workspaceWrite",
                SandboxPolicy::DangerFullAccess => "dangerFullAccess",
                SandboxPolicy::ExternalSandbox { .. } => "externalSandbox",
            };
            (
                format!("sandboxPolicy `{name}`"),
                CommandSandbox::new(mode, network_access, roots, vec![home]),
            )
        }
        None => {
            let config = &context.config;
            let mode = config.sandbox_mode;
            let sandbox = if mode == crate::core::SandboxMode::WorkspaceWrite {
                CommandSandbox::new(
                    mode,
                    config.sandbox_network_access,
                    config.sandbox_writable_roots.clone(),
                    vec![home],
                )
            } else {
                CommandSandbox::new(mode, false, Vec::new(), vec![home])
            };
            (
                format!("the configured sandbox_mode `{}`", sandbox.name()),
                sandbox,
            )
        }
    };
    let sandbox = sandbox.with_isolation(context.config.sandbox_isolation);
    if let Some(reason) = sandbox.unsupported() {
        return Err(HandlerError::InvalidParams(format!(
            "{named} cannot be enforced on this machine ({reason}), and command/exec will not \
             run a command unconfined when confinement was asked for; pass \
             {{\"type\":\"dangerFullAccess\"}} (or `externalSandbox` when the daemon itself runs \
             confined) to run it with your full access"
        )));
    }
    sandbox.prepare(cwd).map_err(|error| match error {
        SandboxError::Unsupported { .. } | SandboxError::InvalidPath { .. } => {
            HandlerError::InvalidParams(format!("{named}: {error}"))
        }
        other => HandlerError::Internal(format!("{named}: {other}")),
    })
}

/// A command's output on its way out: streamed as `command/exec/outputDelta` (base64) or kept
/// for the response, at most `cap` bytes per stream either way; the rest is read and dropped,
/// so the command never blocks on a full pipe.
struct Output {
    cap: Option<usize>,
    target: Option<(Arc<ServerContext>, String)>,
    kept: [Vec<u8>; 2],
    total: [usize; 2],
}

impl Output {
    fn new(cap: Option<usize>, target: Option<(Arc<ServerContext>, String)>) -> Output {
        Output {
            cap,
            target,
            kept: [Vec::new(), Vec::new()],
            total: [0, 0],
        }
    }

    async fn push(&mut self, stream: Stream, bytes: &[u8]) {
        let (index, name) = match stream {
            Stream::Stdout => (0, "stdout"),
            Stream::Stderr => (1, "stderr"),
        };
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
            Some((context, process_id)) => {
                let delta = ServerNotification::CommandExecOutputDelta(
                    CommandExecOutputDeltaNotification {
                        process_id: process_id.clone(),
                        stream: name.to_string(),
                        delta_base64: base64::engine::general_purpose::STANDARD
                            .encode(&bytes[..room]),
                        cap_reached,
                    },
                );
                // A client gone away reads nothing; the command still runs to its end.
                let _ = context.outgoing.send_notification(&delta).await;
            }
            None => self.kept[index].extend_from_slice(&bytes[..room]),
        }
    }

    fn finish(self) -> (String, String) {
        let [stdout, stderr] = self.kept;
        (
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        )
    }
}

handler!(CommandExec, |context, params| command_exec(context, params)
    .await);
