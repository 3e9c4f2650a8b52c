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

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::core::CommandSandbox;
use crate::protocol::command::{CommandExecParams, CommandExecResponse};
use crate::protocol::common::SandboxPolicy;
use crate::sandbox::{PreparedSandbox, SandboxError};
use crate::supervisor::{self, PtyHandle, TerminalInput, TerminalMode, TerminalSize};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::super::exec_processes::ExecControl;
use super::exec_run::{drive, Delta, Output};

/// Defaults when the client names none.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

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
    // The startup check of the sandbox's mode answers before the command is confined.
    crate::core::sandboxing::isolation_decided().await;
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
        .map(|id| (context.clone(), Delta::CommandExec(id)));
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

handler!(CommandExec, |context, params| command_exec(context, params)
    .await);
