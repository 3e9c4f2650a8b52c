//! `exec_command`: runs a shell command the model wrote, with the user's shell, in the thread's
//! working directory (or `workdir`), streaming its output as it arrives.
//!
//! The argument names follow the shape models are trained on (`cmd`, `workdir`, `shell`, `login`,
//! `sandbox_permissions`, `justification`) plus `timeout_ms`. There is no sandbox yet, so
//! approval cannot lean on one: `never` never asks (the user chose that); `untrusted` asks for
//! everything but a short list of read-only commands; `on-request` does the same unless the
//! sandbox mode is `danger-full-access`, where it asks only when the model requests escalation
//! (`sandbox_permissions: "require_escalated"`). Every command runs in its own process group,
//! and a timeout or an interrupt kills the whole group, not just the shell.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::process::Command;

use super::super::approval::{
    await_reply, ClientReply, ClientRequest, ClientRequestKind, CommandApproval, CommandDecision,
};
use super::super::event::EventMsg;
use super::super::items::{ToolItemStatus, TurnItem};
use super::super::settings::{ApprovalPolicy, SandboxMode};
use super::super::turn::{persist_turn_item, TurnContext};
use super::process::{exit_code_of, kill_group, OutputPipes};
use super::ToolOutput;

pub(crate) const TOOL_NAME: &str = "exec_command";

/// Used when the model gives no `timeout_ms`.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The item keeps at most this much output; the rest is counted but not kept.
const MAX_AGGREGATED_BYTES: usize = 1024 * 1024;
/// The model sees at most this much output: the head and the tail, the middle elided.
const MAX_MODEL_OUTPUT_BYTES: usize = 32 * 1024;
/// Commands run without asking under `untrusted` (and sandboxed `on-request`): they only read,
/// whatever their arguments. Tools whose flags can write or run programs (`rg --pre`,
/// `date -s`, `find -exec`, `sort -o`) are deliberately absent. Anything with shell operators
/// (pipes, redirections, substitutions, sequencing, globs) is asked about regardless.
const KNOWN_READ_ONLY: &[&str] = &[
    "cat", "cd", "echo", "false", "head", "id", "ls", "nl", "pwd", "tail", "true", "uname", "wc",
    "which", "whoami",
];
/// Characters that let a command line do more than run one program with literal arguments.
const SHELL_METACHARACTERS: &[char] = &[
    ';', '|', '&', '>', '<', '`', '$', '(', ')', '{', '}', '\\', '\'', '"', '*', '?', '[', '~',
    '!', '#', '\n', '\r',
];

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ShellArgs {
    pub cmd: String,
    #[serde(default)]
    pub workdir: Option<String>,
    #[serde(default)]
    pub shell: Option<String>,
    #[serde(default)]
    pub login: Option<bool>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub sandbox_permissions: Option<String>,
    #[serde(default)]
    pub justification: Option<String>,
}

/// The definition offered to the model.
pub(crate) fn spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": "Run a shell command in the workspace and return its exit code and output (stdout and stderr interleaved).",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "cmd": {"type": "string", "description": "The command line, run by the shell."},
                "workdir": {"type": "string", "description": "Directory to run in; relative paths start at the thread's working directory, which is also the default."},
                "shell": {"type": "string", "description": "Shell to run the command with; the user's shell when omitted."},
                "login": {"type": "boolean", "description": "Run the shell as a login shell (-l), loading the user's profile. Default true."},
                "timeout_ms": {"type": "number", "description": "Kill the command (and everything it started) after this many milliseconds. Default 120000."},
                "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"], "description": "`require_escalated` asks the user to run this command outside the sandbox; give a `justification`."},
                "justification": {"type": "string", "description": "Why the command needs to run outside the sandbox, shown to the user when asking."}
            },
            "required": ["cmd"],
            "additionalProperties": false
        }
    })
}

/// Whether the approval policy requires asking before running `args`.
///
/// No sandbox is enforced yet, so a sandbox mode other than `danger-full-access` cannot make
/// `on-request` safe to run unasked: until one exists it behaves like `untrusted`.
pub(crate) fn needs_approval(
    policy: ApprovalPolicy,
    sandbox: SandboxMode,
    args: &ShellArgs,
) -> bool {
    let escalated = args.sandbox_permissions.as_deref() == Some("require_escalated");
    match (policy, sandbox) {
        (ApprovalPolicy::Never, _) => false,
        (ApprovalPolicy::OnRequest, SandboxMode::DangerFullAccess) => escalated,
        (ApprovalPolicy::OnRequest, _) => escalated || !is_known_read_only(&args.cmd),
        (ApprovalPolicy::Untrusted, _) => !is_known_read_only(&args.cmd),
    }
}

/// A known read-only program with plain literal arguments and nothing else.
fn is_known_read_only(cmd: &str) -> bool {
    if cmd.contains(SHELL_METACHARACTERS) {
        return false;
    }
    cmd.split_whitespace()
        .next()
        .is_some_and(|program| KNOWN_READ_ONLY.contains(&program))
}

/// `/bin/bash -lc 'echo hi'`: the display form of what runs.
pub(crate) fn display_command(shell: &str, login: bool, cmd: &str) -> String {
    let flag = if login { "-lc" } else { "-c" };
    format!("{shell} {flag} '{}'", cmd.replace('\'', r"'\''"))
}

fn user_shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|shell| !shell.is_empty())
        .unwrap_or_else(|| "/bin/bash".to_string())
}

/// What one run is about, resolved from the arguments and the thread.
struct Invocation {
    call_id: String,
    shell: String,
    login: bool,
    cmd: String,
    cwd: PathBuf,
    display: String,
    timeout: Duration,
}

impl Invocation {
    fn item(&self, status: ToolItemStatus) -> TurnItem {
        self.item_with_process(status, None)
    }

    fn item_with_process(&self, status: ToolItemStatus, process_id: Option<u32>) -> TurnItem {
        TurnItem::CommandExecution {
            id: self.call_id.clone(),
            command: self.display.clone(),
            cwd: self.cwd.display().to_string(),
            status,
            aggregated_output: None,
            exit_code: None,
            duration_ms: None,
            process_id: process_id.map(|pid| pid.to_string()),
            raw_command: self.cmd.clone(),
        }
    }

    fn output(&self, text: String) -> ToolOutput {
        ToolOutput {
            call_id: self.call_id.clone(),
            custom: false,
            text,
        }
    }
}

/// Runs one `exec_command` call. `None` when the turn ended first (the item stays open).
pub(crate) async fn run(
    turn: &TurnContext,
    call_id: String,
    args: ShellArgs,
) -> Option<ToolOutput> {
    let settings = turn.thread.settings();
    let cwd = match &args.workdir {
        Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => settings.cwd.join(dir),
        None => settings.cwd.clone(),
    };
    let shell = args.shell.clone().unwrap_or_else(user_shell);
    let login = args.login.unwrap_or(true);
    let invocation = Invocation {
        display: display_command(&shell, login, &args.cmd),
        call_id,
        shell,
        login,
        cmd: args.cmd.clone(),
        cwd,
        timeout: Duration::from_millis(args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).max(1)),
    };
    let approved_before = turn
        .thread
        .state()
        .approved_commands
        .contains(&invocation.display);
    // Asking announces the item (without a process yet); otherwise it is announced once the
    // process exists, with its id.
    let asked =
        needs_approval(settings.approval_policy, settings.sandbox, &args) && !approved_before;
    if asked {
        if let Some(refusal) = ask_approval(turn, &invocation, args.justification).await? {
            return Some(refusal);
        }
    }
    execute(turn, &invocation, asked).await
}

/// Asks; `Some(None)` to go ahead, `Some(Some(output))` when refused, `None` when the turn ended.
async fn ask_approval(
    turn: &TurnContext,
    invocation: &Invocation,
    reason: Option<String>,
) -> Option<Option<ToolOutput>> {
    turn.emit(EventMsg::WaitingOnApproval {
        turn_id: turn.turn_id.clone(),
        waiting: true,
    })
    .await;
    emit_item(turn, &invocation.item(ToolItemStatus::InProgress), false).await;
    let (request, reply_rx) = ClientRequest::new(
        turn.turn_id.clone(),
        ClientRequestKind::CommandApproval(CommandApproval {
            item_id: invocation.call_id.clone(),
            command: invocation.display.clone(),
            raw_command: invocation.cmd.clone(),
            cwd: invocation.cwd.display().to_string(),
            reason,
        }),
    );
    turn.emit(EventMsg::ClientRequest(request)).await;
    let reply = await_reply(reply_rx, &turn.cancel).await;
    turn.emit(EventMsg::WaitingOnApproval {
        turn_id: turn.turn_id.clone(),
        waiting: false,
    })
    .await;
    let (status, text) = match reply {
        ClientReply::Decision(CommandDecision::Accept) => return Some(None),
        ClientReply::Decision(CommandDecision::AcceptForSession) => {
            turn.thread
                .state()
                .approved_commands
                .insert(invocation.display.clone());
            return Some(None);
        }
        ClientReply::Cancelled => return None,
        ClientReply::Decision(CommandDecision::Cancel) => {
            // Cancel declines and ends the turn; the model still gets an answer for its call.
            turn.cancel.cancel();
            (
                ToolItemStatus::Declined,
                "The user cancelled this command; it did not run.",
            )
        }
        ClientReply::Decision(CommandDecision::Decline)
        | ClientReply::Invalid
        | ClientReply::ToolResult(_) => (
            ToolItemStatus::Declined,
            "The user declined to run this command; it did not run.",
        ),
        ClientReply::Failed(_) => (
            ToolItemStatus::Failed,
            "The approval request failed; the command did not run.",
        ),
    };
    emit_item(turn, &invocation.item(status), true).await;
    Some(Some(invocation.output(text.to_string())))
}

async fn emit_item(turn: &TurnContext, item: &TurnItem, completed: bool) {
    let turn_id = turn.turn_id.clone();
    if completed {
        persist_turn_item(turn, item).await;
        turn.emit(EventMsg::ItemCompleted {
            turn_id,
            item: item.clone(),
        })
        .await;
    } else {
        turn.emit(EventMsg::ItemStarted {
            turn_id,
            item: item.clone(),
        })
        .await;
    }
}

/// How a process run ended.
struct RunResult {
    exit_code: Option<i32>,
    output: String,
    timed_out: bool,
    cancelled: bool,
    process_id: Option<u32>,
    spawn_error: Option<String>,
}

async fn execute(
    turn: &TurnContext,
    invocation: &Invocation,
    announced: bool,
) -> Option<ToolOutput> {
    let clock = Instant::now();
    let result = run_process(turn, invocation, announced).await;
    if result.cancelled {
        return None;
    }
    let duration_ms = i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX);
    let exit_code = match (result.timed_out, result.exit_code) {
        (true, _) => Some(124),
        (false, code) => code,
    };
    let status = match (&result.spawn_error, exit_code) {
        (None, Some(0)) => ToolItemStatus::Completed,
        _ => ToolItemStatus::Failed,
    };
    let item = TurnItem::CommandExecution {
        id: invocation.call_id.clone(),
        command: invocation.display.clone(),
        cwd: invocation.cwd.display().to_string(),
        status,
        aggregated_output: Some(result.output.clone()),
        exit_code,
        duration_ms: Some(duration_ms),
        process_id: result.process_id.map(|pid| pid.to_string()),
        raw_command: invocation.cmd.clone(),
    };
    emit_item(turn, &item, true).await;
    Some(invocation.output(model_output(&result, exit_code, clock.elapsed())))
}

fn model_output(result: &RunResult, exit_code: Option<i32>, elapsed: Duration) -> String {
    let mut text = String::new();
    if let Some(error) = &result.spawn_error {
        text.push_str(&format!("The command could not start: {error}\n"));
    }
    if result.timed_out {
        text.push_str("The command timed out and was killed with everything it started.\n");
    }
    if let Some(code) = exit_code {
        text.push_str(&format!("Exit code: {code}\n"));
    }
    text.push_str(&format!(
        "Wall time: {:.2} seconds\nOutput:\n",
        elapsed.as_secs_f64()
    ));
    text.push_str(&truncate_middle(&result.output, MAX_MODEL_OUTPUT_BYTES));
    text
}

/// Keeps the head and tail of `text` within `max` bytes, marking the cut.
fn truncate_middle(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut head_end = max / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - max / 2;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let elided = tail_start - head_end;
    format!(
        "{}\n[… {elided} bytes elided …]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// Runs the process to its end (or kill). Unless `announced`, emits the item's start once the
/// process exists, so the start carries its id.
async fn run_process(turn: &TurnContext, invocation: &Invocation, announced: bool) -> RunResult {
    let mut result = RunResult {
        exit_code: None,
        output: String::new(),
        timed_out: false,
        cancelled: false,
        process_id: None,
        spawn_error: None,
    };
    let mut command = Command::new(&invocation.shell);
    command
        .arg(if invocation.login { "-lc" } else { "-c" })
        .arg(&invocation.cmd)
        .current_dir(&invocation.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a kill reaches everything the command started.
        .process_group(0)
        .kill_on_drop(true);
    let spawned = command.spawn();
    result.process_id = spawned.as_ref().ok().and_then(|child| child.id());
    if !announced {
        let started = invocation.item_with_process(ToolItemStatus::InProgress, result.process_id);
        emit_item(turn, &started, false).await;
    }
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            result.spawn_error = Some(error.to_string());
            return result;
        }
    };
    let mut pipes = OutputPipes::new(child.stdout.take(), child.stderr.take());
    let deadline = tokio::time::sleep(invocation.timeout);
    tokio::pin!(deadline);
    let mut exit = None;
    while exit.is_none() || pipes.is_open() {
        tokio::select! {
            chunk = pipes.next_chunk() => {
                if let Some(text) = chunk {
                    forward_output(turn, invocation, &mut result.output, text).await;
                }
            }
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.ok().and_then(exit_code_of));
            }
            _ = &mut deadline => {
                kill_group(result.process_id);
                result.timed_out = true;
                break;
            }
            _ = turn.cancel.cancelled() => {
                kill_group(result.process_id);
                result.cancelled = true;
                break;
            }
        }
    }
    if exit.is_none() {
        // Killed: reap it (bounded; SIGKILL cannot be ignored).
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        exit = Some(status.ok().and_then(Result::ok).and_then(exit_code_of));
    }
    result.exit_code = exit.flatten();
    result
}

async fn forward_output(
    turn: &TurnContext,
    invocation: &Invocation,
    aggregated: &mut String,
    text: String,
) {
    if aggregated.len() >= MAX_AGGREGATED_BYTES {
        return;
    }
    aggregated.push_str(&text);
    turn.emit(EventMsg::CommandOutputDelta {
        turn_id: turn.turn_id.clone(),
        item_id: invocation.call_id.clone(),
        delta: text,
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &str, escalated: bool) -> ShellArgs {
        ShellArgs {
            cmd: cmd.into(),
            workdir: None,
            shell: None,
            login: None,
            timeout_ms: None,
            sandbox_permissions: escalated.then(|| "require_escalated".to_string()),
            justification: None,
        }
    }

    #[test]
    fn approval_follows_the_policy_while_no_sandbox_exists() {
        use ApprovalPolicy::{Never, OnRequest, Untrusted};
        use SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};
        let asks = |policy, sandbox, cmd, escalated| {
            needs_approval(policy, sandbox, &args(cmd, escalated))
        };
        assert!(!asks(Never, ReadOnly, "rm -rf x", true));
        assert!(!asks(OnRequest, DangerFullAccess, "touch x", false));
        assert!(asks(OnRequest, DangerFullAccess, "touch x", true));
        for sandbox in [ReadOnly, WorkspaceWrite] {
            assert!(asks(OnRequest, sandbox, "touch x", false));
            assert!(!asks(OnRequest, sandbox, "ls -la", false));
            assert!(asks(OnRequest, sandbox, "ls -la", true));
        }
        assert!(!asks(Untrusted, DangerFullAccess, "ls -la", false));
        assert!(asks(Untrusted, DangerFullAccess, "touch x", false));
    }

    #[test]
    fn only_plain_read_only_commands_skip_approval() {
        for cmd in ["ls -la", "cat README.md", "wc -l src/main.rs", "pwd"] {
            assert!(is_known_read_only(cmd), "{cmd}");
        }
        for cmd in [
            "ls; rm x",
            "cat a | sh",
            "echo x > f",
            "echo $(rm x)",
            "echo `rm x`",
            "ls && rm x",
            "cat <f",
            "echo 'a;b'",
            "rg --pre sh x",
            "date -s 2020-01-01",
            "find . -delete",
            "find . -exec rm {} +",
            "sort -o f g",
            "ls\nrm x",
            "touch x",
        ] {
            assert!(!is_known_read_only(cmd), "{cmd}");
        }
    }

    #[test]
    fn display_command_quotes_for_the_shell() {
        assert_eq!(
            display_command("/bin/bash", true, "echo 'hi'"),
            r"/bin/bash -lc 'echo '\''hi'\'''"
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let long = format!("{}{}", "a".repeat(100), "b".repeat(100));
        let cut = truncate_middle(&long, 20);
        assert!(
            cut.starts_with("aaaaaaaaaa\n[… 180 bytes elided …]\nbbbbbbbbbb"),
            "{cut}"
        );
    }
}
