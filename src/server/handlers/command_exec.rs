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
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::core::CommandSandbox;
use crate::protocol::command::{CommandExecParams, CommandExecResponse};
use crate::protocol::common::SandboxPolicy;
use crate::protocol::notification::{CommandExecOutputDeltaNotification, ServerNotification};
use crate::sandbox::{PreparedSandbox, SandboxError};
use crate::supervisor::{self, CommandTree};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;

/// Defaults when the client names none.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;
/// The conventional exit code of a command killed by a timeout.
const TIMEOUT_EXIT_CODE: i32 = 124;
const READ_CHUNK: usize = 8 * 1024;
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
    let stream_id = check_params(&params)?;
    let cwd = match &params.cwd {
        Some(cwd) => std::path::absolute(cwd),
        None => std::env::current_dir(),
    }
    .map_err(|e| HandlerError::InvalidParams(format!("`cwd` cannot be resolved: {e}")))?;
    // Built here; kept until the command is over (in the fallback it owns its TMPDIR).
    let prepared = prepare_sandbox(context, &params, &cwd)?;
    let mut command = build_command(context, &prepared, &params, &cwd)?;
    let program = params.command.first().map_or("", String::as_str);
    let (mut child, mut tree) =
        supervisor::spawn_command(&mut command, |command| prepared.install(command))
            .map_err(|e| HandlerError::InvalidRequest(format!("failed to run `{program}`: {e}")))?;
    let cap = (!params.disable_output_cap).then(|| {
        params
            .output_bytes_cap
            .map_or(DEFAULT_OUTPUT_CAP, |c| c as usize)
    });
    let mut readers = OutputReaders::new(&context.lifecycle.handlers_stop);
    if let Some(pipe) = child.stdout.take() {
        readers.spawn(
            OutputStream::Stdout,
            pipe,
            cap,
            stream(context, &stream_id, "stdout"),
        );
    }
    if let Some(pipe) = child.stderr.take() {
        readers.spawn(
            OutputStream::Stderr,
            pipe,
            cap,
            stream(context, &stream_id, "stderr"),
        );
    }
    let timeout = (!params.disable_timeout).then(|| {
        Duration::from_millis(
            params
                .timeout_ms
                .map_or(DEFAULT_TIMEOUT_MS, |t| t.max(0) as u64),
        )
    });
    let exit_code = wait_for_exit(context, &mut child, &tree, timeout).await;
    // Whatever the command left running goes with it (and the pipes it held close).
    tree.end().await;
    drop(prepared);
    let exit_code = exit_code?;
    let (stdout, stderr) = readers.finish().await;
    Ok(CommandExecResponse {
        exit_code,
        stdout: if stream_id.is_some() {
            String::new()
        } else {
            stdout
        },
        stderr: if stream_id.is_some() {
            String::new()
        } else {
            stderr
        },
    })
}

/// Refuses what command/exec cannot do; the process id to stream under, when streaming.
fn check_params(params: &CommandExecParams) -> Result<Option<String>, HandlerError> {
    if params.command.is_empty() {
        return Err(HandlerError::InvalidParams(
            "command must not be empty".to_string(),
        ));
    }
    if params.tty || params.stream_stdin {
        return Err(HandlerError::InvalidParams(
            "`tty` and `streamStdin` are not supported by command/exec".to_string(),
        ));
    }
    match (params.stream_stdout_stderr, &params.process_id) {
        (true, Some(process_id)) => Ok(Some(process_id.clone())),
        (true, None) => Err(HandlerError::InvalidParams(
            "`streamStdoutStderr` needs a `processId`".to_string(),
        )),
        (false, _) => Ok(None),
    }
}

/// The child, built by the sandbox (in namespace mode, bwrap in front of the program): piped
/// output, no stdin, the requested cwd, and the environment `shell_environment_policy` gives
/// with the request's `env` on top. [`supervisor::spawn_command`] gives it its own process group and
/// tracks what it starts.
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
    let mut command = prepared.command(program, args, cwd, env);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    Ok(command)
}

/// Where a stream's chunks go when streaming: (context, process id, stream name).
type StreamTarget = Option<(Arc<ServerContext>, String, &'static str)>;

fn stream(
    context: &Arc<ServerContext>,
    stream_id: &Option<String>,
    name: &'static str,
) -> StreamTarget {
    stream_id
        .as_ref()
        .map(|id| (context.clone(), id.clone(), name))
}

async fn wait_for_exit(
    context: &ServerContext,
    child: &mut tokio::process::Child,
    tree: &CommandTree,
    timeout: Option<Duration>,
) -> Result<i32, HandlerError> {
    let deadline = async {
        match timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    };
    let status = tokio::select! {
        status = child.wait() => status,
        _ = deadline => {
            tree.kill().await;
            let _ = child.wait().await;
            return Ok(TIMEOUT_EXIT_CODE);
        }
        _ = context.lifecycle.handlers_stop.cancelled() => {
            tree.kill().await;
            child.wait().await
        }
    };
    let status =
        status.map_err(|e| HandlerError::Internal(format!("waiting for the command: {e}")))?;
    Ok(exit_code(&status))
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputStream {
    Stdout,
    Stderr,
}

/// The request's pipe readers and the token that stops them.
struct OutputReaders {
    tasks: JoinSet<(OutputStream, Vec<u8>)>,
    stop: CancellationToken,
}

impl OutputReaders {
    /// Readers stop at shutdown (a child of `handlers_stop`) or when [`Self::finish`] gives up.
    fn new(handlers_stop: &CancellationToken) -> OutputReaders {
        OutputReaders {
            tasks: JoinSet::new(),
            stop: handlers_stop.child_token(),
        }
    }

    fn spawn<R: AsyncRead + Unpin + Send + 'static>(
        &mut self,
        which: OutputStream,
        pipe: R,
        cap: Option<usize>,
        target: StreamTarget,
    ) {
        let stop = self.stop.clone();
        self.tasks
            .spawn(async move { (which, collect(pipe, cap, target, stop).await) });
    }

    /// Waits for both pipes to close, at most [`OUTPUT_GRACE_AFTER_EXIT`], then stops the rest.
    async fn finish(mut self) -> (String, String) {
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let deadline = tokio::time::sleep(OUTPUT_GRACE_AFTER_EXIT);
        tokio::pin!(deadline);
        loop {
            let joined = tokio::select! {
                joined = self.tasks.join_next() => joined,
                () = &mut deadline, if !self.stop.is_cancelled() => {
                    self.stop.cancel();
                    continue;
                }
            };
            match joined {
                Some(Ok((OutputStream::Stdout, bytes))) => stdout = bytes,
                Some(Ok((OutputStream::Stderr, bytes))) => stderr = bytes,
                Some(Err(error)) => tracing::warn!(%error, "command/exec output reader failed"),
                None => break,
            }
        }
        (
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        )
    }
}

impl Drop for OutputReaders {
    fn drop(&mut self) {
        // The request ended early (an error, or its task was dropped): stop the readers now;
        // the JoinSet aborts whatever is still running as it drops.
        self.stop.cancel();
    }
}

/// Reads a pipe to its end, keeping at most `cap` bytes, or streaming them when asked. Once
/// `stop` is cancelled it returns what it kept so far.
async fn collect<R: AsyncRead + Unpin>(
    mut pipe: R,
    cap: Option<usize>,
    target: StreamTarget,
    stop: CancellationToken,
) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut total = 0usize;
    let mut buffer = vec![0u8; READ_CHUNK];
    loop {
        let read = tokio::select! {
            read = pipe.read(&mut buffer) => read,
            () = stop.cancelled() => return kept,
        };
        let read = match read {
            Ok(0) | Err(_) => return kept,
            Ok(read) => read,
        };
        let room = cap.map_or(read, |cap| cap.saturating_sub(total).min(read));
        total += read;
        if room == 0 {
            continue;
        }
        let cap_reached = cap.is_some_and(|cap| total >= cap);
        match &target {
            Some((context, process_id, name)) => {
                let delta = ServerNotification::CommandExecOutputDelta(
                    CommandExecOutputDeltaNotification {
                        process_id: process_id.clone(),
                        stream: (*name).to_string(),
                        delta_base64: base64::engine::general_purpose::STANDARD
                            .encode(&buffer[..room]),
                        cap_reached,
                    },
                );
                tokio::select! {
                    _ = context.outgoing.send_notification(&delta) => {}
                    () = stop.cancelled() => return kept,
                }
            }
            None => kept.extend_from_slice(&buffer[..room]),
        }
    }
}

handler!(CommandExec, |context, params| command_exec(context, params)
    .await);
