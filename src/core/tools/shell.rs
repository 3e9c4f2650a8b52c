//! `exec_command`: runs a shell command the model wrote, with the user's shell, in the thread's
//! working directory (or `workdir`), streaming its output as it arrives; a command still running
//! after `yield_time_ms` stays alive as a session of the thread (`super::unified_exec`).
//!
//! The argument names follow the shape models are trained on (`cmd`, `workdir`, `login`,
//! `sandbox_permissions`, `justification`, `tty`, `yield_time_ms`, `max_output_tokens`,
//! `prefix_rule`). The shell is never the model's to
//! choose: the approval rules judge `cmd` as the user's shell would run it, so a `shell` argument
//! (a program of the model's choice, which could do anything) is ignored and the model is told.
//!
//! Under `read-only` and `workspace-write` every command runs inside the sandbox
//! ([`super::super::sandboxing`]); only a command the model asks to run outside it
//! (`sandbox_permissions: "require_escalated"`) and the user approves runs unconfined. Where the
//! kernel cannot enforce the thread's sandbox, the rules (see [`gate`]) fall back to what needs
//! no sandbox: plain known read-only commands run, anything else only after the user approved
//! it, and with approval `never` it is refused. Where only the sandbox's fallback mode is
//! available, the thread is warned once which protections that mode lacks. The command's
//! environment is what `shell_environment_policy` gives ([`super::super::shell_env`]). Every
//! command is started by the supervisor (`crate::supervisor`): when its leader exits, is terminated or is interrupted, everything it
//! started is killed, even what left its process group.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

use super::super::approval::{ClientReply, ClientRequestKind, CommandApproval, CommandDecision};
use super::super::event::EventMsg;
use super::super::ids::ItemId;
use super::super::items::{ToolItemStatus, TurnItem};
use super::super::sandboxing::CommandSandbox;
use super::super::settings::{ApprovalPolicy, SandboxMode};
use super::super::shell_env::ShellEnvironmentPolicy;
use super::handle::TurnHandle;
use super::output::ToolOutput;
use super::unified_exec::output::render;
use super::unified_exec::session::{Driven, Session};
use super::unified_exec::{self, MAX_LIVE_SESSIONS};
use crate::supervisor::{self, TerminalMode, TerminalSize};

pub(crate) const TOOL_NAME: &str = "exec_command";

/// How long a call waits for its command before answering with the output so far, when the
/// model names no `yield_time_ms`; what it names is held within the two bounds below.
const DEFAULT_YIELD_TIME_MS: u64 = 10_000;
const MIN_YIELD_TIME_MS: u64 = 250;
const MAX_YIELD_TIME_MS: u64 = 30_000;
/// Commands that run without asking, and even under a read-only thread that cannot ask: they
/// only read, whatever their arguments. Tools whose flags can write or run programs (`rg --pre`,
/// `date -s`, `find -exec`/`-delete`, `sort -o`, `tee`) are deliberately absent.
const KNOWN_READ_ONLY: &[&str] = &[
    "cat", "cd", "echo", "false", "head", "id", "ls", "nl", "pwd", "tail", "true", "uname", "wc",
    "which", "whoami",
];

/// Whether `c` may appear in a known read-only command line. A positive list, so nothing the
/// shell gives meaning to gets through: no operators (`; | & > <`), substitutions (`$`,
/// backquotes, parentheses), quotes, escapes, globs, `~`, braces, comments or line breaks — only
/// words of literal text.
fn is_plain_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            ' ' | '\t' | '-' | '_' | '.' | '/' | ',' | ':' | '+' | '=' | '@' | '%'
        )
}

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
    pub tty: Option<bool>,
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    #[serde(default)]
    pub sandbox_permissions: Option<String>,
    #[serde(default)]
    pub justification: Option<String>,
    /// A reusable approval prefix the model proposes with an escalation. Accepted for the
    /// reference's shape; approvals here cover the exact command line only.
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
}

/// The definition offered to the model: the reference's names, types and descriptions.
pub(crate) fn spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": "Runs a command in a PTY, returning output or a session ID for ongoing interaction.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "cmd": {"type": "string", "description": "Shell command to execute."},
                "justification": {"type": "string", "description": "User-facing approval question for `require_escalated`; omit otherwise."},
                "login": {"type": "boolean", "description": "Request login-shell startup. Omit to inherit."},
                "max_output_tokens": {"type": "number", "description": "Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy."},
                "prefix_rule": {"type": "array", "description": "Reusable approval prefix for `cmd`, only with `sandbox_permissions: \"require_escalated\"`; for example [\"git\", \"pull\"].", "items": {"type": "string"}},
                "sandbox_permissions": {"type": "string", "description": "Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for unsandboxed execution.", "enum": ["use_default", "require_escalated"]},
                "shell": {"type": "string", "description": "Shell binary to launch. Defaults to the user's default shell."},
                "tty": {"type": "boolean", "description": "True allocates a PTY for the command; false or omitted uses plain pipes."},
                "workdir": {"type": "string", "description": "Working directory for the command. Defaults to the turn cwd."},
                "yield_time_ms": {"type": "number", "description": "Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms."}
            },
            "required": ["cmd"],
            "additionalProperties": false
        }
    })
}

/// What happens to a command before it runs. `sandboxed`: whether it runs inside the thread's
/// sandbox or outside it (no sandbox to run in, or an approved escalation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gate {
    Run {
        sandboxed: bool,
    },
    /// Ask the user; run only when approved.
    Ask {
        sandboxed: bool,
    },
    /// Never runs; the text tells the model why.
    Refuse(String),
}

/// The rule for one command, from the thread's policies. `unsupported` is why the kernel cannot
/// enforce the thread's sandbox, if it cannot.
///
/// - `danger-full-access` confines nothing: `never` runs everything, `on-request` asks only
///   when the model requests escalation, `untrusted` asks for all but plain known read-only
///   commands.
/// - `read-only` / `workspace-write` with a working sandbox: commands run confined. Escalation
///   (running outside the sandbox) is asked for under `on-request` and `untrusted`, and refused
///   under `never`, where nobody can be asked. `untrusted` also asks before running anything
///   but a plain known read-only command; approved, it still runs confined.
/// - `read-only` / `workspace-write` the kernel cannot enforce: nothing can be confined, so only
///   a plain known read-only command runs unasked; anything else needs the user's approval, and
///   under `never` it is refused rather than run with more access than the client asked for.
pub(crate) fn gate(
    policy: ApprovalPolicy,
    sandbox: SandboxMode,
    unsupported: Option<&str>,
    args: &ShellArgs,
) -> Gate {
    let escalated = args.sandbox_permissions.as_deref() == Some("require_escalated");
    let read_only = is_known_read_only(&args.cmd);
    let outside = Gate::Ask { sandboxed: false };
    if sandbox == SandboxMode::DangerFullAccess {
        return match policy {
            ApprovalPolicy::Never => Gate::Run { sandboxed: false },
            ApprovalPolicy::OnRequest if escalated => outside,
            ApprovalPolicy::Untrusted if !read_only => outside,
            ApprovalPolicy::OnRequest | ApprovalPolicy::Untrusted => Gate::Run { sandboxed: false },
        };
    }
    if let Some(reason) = unsupported {
        return match policy {
            ApprovalPolicy::Never if !read_only => Gate::Refuse(refusal(sandbox, reason)),
            ApprovalPolicy::OnRequest if escalated || !read_only => outside,
            ApprovalPolicy::Untrusted if !read_only => outside,
            _ => Gate::Run { sandboxed: false },
        };
    }
    match policy {
        ApprovalPolicy::Never if escalated => Gate::Refuse(ESCALATION_REFUSED.to_string()),
        ApprovalPolicy::Never => Gate::Run { sandboxed: true },
        ApprovalPolicy::OnRequest | ApprovalPolicy::Untrusted if escalated => outside,
        ApprovalPolicy::Untrusted if !read_only => Gate::Ask { sandboxed: true },
        ApprovalPolicy::OnRequest | ApprovalPolicy::Untrusted => Gate::Run { sandboxed: true },
    }
}

/// What the model is told when it asks to leave the sandbox under approval `never`.
const ESCALATION_REFUSED: &str = "refused: this command asked to run outside the sandbox \
     (`sandbox_permissions: \"require_escalated\"`), but the approval policy is `never`, so the \
     user cannot be asked to allow it. The command did not run. Run it without \
     `require_escalated`: it then runs inside the sandbox.";

/// What the model is told when a command is refused because the sandbox cannot be enforced.
fn refusal(sandbox: SandboxMode, reason: &str) -> String {
    let (mode, limit) = match sandbox {
        SandboxMode::ReadOnly => ("read-only", "keep it from writing"),
        SandboxMode::WorkspaceWrite | SandboxMode::DangerFullAccess => {
            ("workspace-write", "keep its writes inside the workspace")
        }
    };
    format!(
        "refused: this thread's sandbox is {mode} and openturn cannot confine this command on \
         this machine ({reason}), so it cannot {limit}; the approval policy is `never`, so the \
         user cannot be asked either. The command did not run. Only plain read-only commands \
         run here: {} with literal arguments and no shell syntax (no pipes, redirections, `;`, \
         `&&`, `$`, quotes or globs). To run anything else, the user must allow it: approval \
         policy `on-request` or `untrusted`, or sandbox `danger-full-access`.",
        KNOWN_READ_ONLY.join(", ")
    )
}

/// A known read-only program with plain literal arguments and nothing else.
fn is_known_read_only(cmd: &str) -> bool {
    if !cmd.chars().all(is_plain_word_char) {
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
    call_id: ItemId,
    shell: String,
    login: bool,
    cmd: String,
    cwd: PathBuf,
    display: String,
    tty: bool,
    yield_time_ms: Option<u64>,
    max_output_tokens: Option<u64>,
    /// Told to the model before the command's output.
    note: Option<String>,
    /// The confinement it runs under (unconfined when the gate said so).
    sandbox: CommandSandbox,
    /// The thread's working directory: what `workspace-write` makes writable, whatever
    /// `workdir` the model picked for the command.
    workspace: PathBuf,
    /// What the command's environment is built from.
    environment: std::sync::Arc<ShellEnvironmentPolicy>,
}

impl Invocation {
    /// What an "accept for session" approval covers: this command line in this directory, and
    /// run outside the sandbox only if that is what was approved.
    fn approval_key(&self) -> (String, PathBuf) {
        let display = if self.sandbox.confines() {
            self.display.clone()
        } else {
            format!("{} [outside the sandbox]", self.display)
        };
        (display, self.cwd.clone())
    }

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
pub(crate) async fn run(turn: &TurnHandle, call_id: ItemId, args: ShellArgs) -> Option<ToolOutput> {
    let settings = turn.env.settings();
    let cwd = match &args.workdir {
        Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => settings.cwd.join(dir),
        None => settings.cwd.clone(),
    };
    // The user's shell, whatever the model asked for (see the module doc).
    let shell = user_shell();
    let ignored_shell = args
        .shell
        .as_ref()
        .filter(|asked| **asked != shell)
        .map(|asked| {
            format!(
                "Note: the `shell` argument ({asked}) was ignored; commands always run with the \
                 user's shell, {shell}.\n"
            )
        });
    let login = args.login.unwrap_or(true);
    let thread_sandbox = CommandSandbox::for_thread(&settings);
    let unsupported = thread_sandbox
        .confines()
        .then(|| thread_sandbox.unsupported())
        .flatten();
    if let Some(reason) = &unsupported {
        warn_unsupported_once(turn, &thread_sandbox, reason).await;
    }
    let gated = gate(
        settings.approval_policy,
        settings.sandbox,
        unsupported.as_deref(),
        &args,
    );
    let sandboxed = matches!(
        gated,
        Gate::Run { sandboxed: true } | Gate::Ask { sandboxed: true }
    );
    let invocation = Invocation {
        display: display_command(&shell, login, &args.cmd),
        call_id,
        shell,
        login,
        cmd: args.cmd.clone(),
        cwd,
        tty: args.tty.unwrap_or(false),
        yield_time_ms: args.yield_time_ms,
        max_output_tokens: args.max_output_tokens,
        note: ignored_shell,
        workspace: settings.cwd.clone(),
        environment: settings.shell_environment.clone(),
        sandbox: if sandboxed {
            thread_sandbox
        } else {
            thread_sandbox.unconfined()
        },
    };
    if let Some(gaps) = invocation.sandbox.fallback_gaps() {
        warn_fallback_once(turn, &invocation.sandbox, &gaps).await;
    }
    if invocation.sandbox.confines() {
        tracing::debug!(call_id = %invocation.call_id, sandbox = invocation.sandbox.name(), "running a command in the sandbox");
    }
    let asked = match gated {
        Gate::Run { .. } => false,
        // An approval "for this session" covers this command line in this directory only.
        Gate::Ask { .. } => !turn.env.approved_for_session(&invocation.approval_key()),
        Gate::Refuse(text) => return Some(refuse(turn, &invocation, text).await),
    };
    // Asking announces the item (without a process yet); otherwise it is announced once the
    // process exists, with its id.
    if asked {
        if let Some(refusal) = ask_approval(turn, &invocation, args.justification).await? {
            return Some(refusal);
        }
    }
    execute(turn, &invocation, asked).await
}

/// Tells the user, once per thread and sandbox mode, that commands under it cannot be confined
/// here and will be refused or asked about instead.
async fn warn_unsupported_once(turn: &TurnHandle, sandbox: &CommandSandbox, reason: &str) {
    if !turn.env.first_sandbox_warning(sandbox.name()) {
        return;
    }
    turn.emit(EventMsg::Warning {
        message: format!(
            "sandbox `{}` cannot be enforced on this machine: {reason}. Commands will not run \
             confined: only plain read-only commands run without asking; anything else needs \
             approval, and with approval policy `never` it is refused.",
            sandbox.name()
        ),
    })
    .await;
}

/// Tells the user, once per thread and sandbox mode, that commands are confined by the
/// fallback mode and what it cannot contain there.
async fn warn_fallback_once(turn: &TurnHandle, sandbox: &CommandSandbox, gaps: &str) {
    let key = match sandbox.name() {
        "read-only" => "fallback read-only",
        _ => "fallback workspace-write",
    };
    if !turn.env.first_sandbox_warning(key) {
        return;
    }
    turn.emit(EventMsg::Warning {
        message: format!("sandbox `{}`: {gaps}", sandbox.name()),
    })
    .await;
}

/// A command the thread's policies forbid: announced and completed as declined, never run.
async fn refuse(turn: &TurnHandle, invocation: &Invocation, text: String) -> ToolOutput {
    tracing::info!(
        call_id = %invocation.call_id,
        "refused a command the thread's sandbox cannot confine"
    );
    emit_item(turn, &invocation.item(ToolItemStatus::InProgress), false).await;
    emit_item(turn, &invocation.item(ToolItemStatus::Declined), true).await;
    invocation.output(text)
}

/// Asks; `Some(None)` to go ahead, `Some(Some(output))` when refused, `None` when the turn ended.
async fn ask_approval(
    turn: &TurnHandle,
    invocation: &Invocation,
    reason: Option<String>,
) -> Option<Option<ToolOutput>> {
    let reply = turn
        .ask_about(
            invocation.item(ToolItemStatus::InProgress),
            ClientRequestKind::CommandApproval(CommandApproval {
                item_id: invocation.call_id.clone(),
                command: invocation.display.clone(),
                raw_command: invocation.cmd.clone(),
                cwd: invocation.cwd.display().to_string(),
                reason,
            }),
        )
        .await;
    let (status, text) = match reply {
        ClientReply::Decision(CommandDecision::Accept) => return Some(None),
        ClientReply::Decision(CommandDecision::AcceptForSession) => {
            turn.env.approve_for_session(invocation.approval_key());
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
        | ClientReply::ToolResult(_)
        | ClientReply::UserAnswers(_)
        | ClientReply::Elicitation(_) => (
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

async fn emit_item(turn: &TurnHandle, item: &TurnItem, completed: bool) {
    if completed {
        turn.item_completed(item.clone()).await;
    } else {
        turn.item_started(item.clone()).await;
    }
}

/// Starts the command as a session of the thread and answers once it exited or
/// `yield_time_ms` passed; a command still running then stays alive for `write_stdin`.
async fn execute(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &str, escalated: bool) -> ShellArgs {
        ShellArgs {
            cmd: cmd.into(),
            workdir: None,
            shell: None,
            login: None,
            tty: None,
            yield_time_ms: None,
            max_output_tokens: None,
            prefix_rule: None,
            sandbox_permissions: escalated.then(|| "require_escalated".to_string()),
            justification: None,
        }
    }

    #[test]
    fn the_gate_never_runs_a_command_with_more_than_the_policies_allow() {
        use ApprovalPolicy::{Never, OnRequest, Untrusted};
        use SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};
        let gate_of =
            |policy, sandbox, cmd, escalated| gate(policy, sandbox, None, &args(cmd, escalated));
        let confined = Gate::Run { sandboxed: true };
        let outside = Gate::Ask { sandboxed: false };
        // Full access confines nothing: `never` runs everything, `on-request` asks only for
        // escalation, `untrusted` for all but plain read-only commands.
        assert_eq!(
            gate_of(Never, DangerFullAccess, "rm -rf x", true),
            Gate::Run { sandboxed: false }
        );
        assert_eq!(
            gate_of(OnRequest, DangerFullAccess, "touch x", false),
            Gate::Run { sandboxed: false }
        );
        assert_eq!(
            gate_of(OnRequest, DangerFullAccess, "touch x", true),
            outside
        );
        assert_eq!(
            gate_of(Untrusted, DangerFullAccess, "touch x", false),
            outside
        );
        for sandbox in [ReadOnly, WorkspaceWrite] {
            // With a working sandbox every command runs confined unless it asks to leave it,
            // which needs the user's approval (and is refused where nobody can be asked).
            assert_eq!(gate_of(Never, sandbox, "touch x", false), confined);
            assert_eq!(gate_of(Never, sandbox, "ls > f", false), confined);
            assert!(matches!(
                gate_of(Never, sandbox, "touch x", true),
                Gate::Refuse(text) if text.contains("require_escalated")
            ));
            assert_eq!(gate_of(OnRequest, sandbox, "touch x", false), confined);
            assert_eq!(gate_of(OnRequest, sandbox, "touch x", true), outside);
            assert_eq!(gate_of(Untrusted, sandbox, "ls -la", false), confined);
            assert_eq!(
                gate_of(Untrusted, sandbox, "touch x", false),
                Gate::Ask { sandboxed: true }
            );
            assert_eq!(gate_of(Untrusted, sandbox, "touch x", true), outside);
        }
    }

    #[test]
    fn without_an_enforceable_sandbox_nothing_runs_unasked_but_plain_reads() {
        use ApprovalPolicy::{Never, OnRequest, Untrusted};
        use SandboxMode::{ReadOnly, WorkspaceWrite};
        let gate_of = |policy, sandbox, cmd, escalated| {
            gate(policy, sandbox, Some("no Landlock"), &args(cmd, escalated))
        };
        let plain = Gate::Run { sandboxed: false };
        let outside = Gate::Ask { sandboxed: false };
        for sandbox in [ReadOnly, WorkspaceWrite] {
            assert_eq!(gate_of(Never, sandbox, "ls -la", false), plain);
            for (cmd, escalated) in [("touch x", false), ("touch x", true), ("ls > f", false)] {
                let refused = gate_of(Never, sandbox, cmd, escalated);
                assert!(
                    matches!(&refused, Gate::Refuse(text) if text.starts_with("refused: this thread's sandbox is") && text.contains("no Landlock")),
                    "{cmd}: {refused:?}"
                );
            }
            assert_eq!(gate_of(OnRequest, sandbox, "touch x", false), outside);
            assert_eq!(gate_of(OnRequest, sandbox, "ls -la", false), plain);
            assert_eq!(gate_of(OnRequest, sandbox, "ls -la", true), outside);
            assert_eq!(gate_of(Untrusted, sandbox, "ls -la", false), plain);
            assert_eq!(gate_of(Untrusted, sandbox, "touch x", false), outside);
        }
    }

    #[test]
    fn only_plain_read_only_commands_skip_approval() {
        for cmd in [
            "ls -la",
            "cat README.md",
            "wc -l src/main.rs",
            "pwd",
            "  head -n 5 a.txt",
            "ls --color=never /tmp",
        ] {
            assert!(is_known_read_only(cmd), "{cmd}");
        }
        for cmd in [
            "ls; rm x",
            "cat a | sh",
            "echo x > f",
            "echo x >> f",
            "cat <f",
            "echo $(rm x)",
            "echo ${IFS}",
            "echo `rm x`",
            "ls && rm x",
            "ls || rm x",
            "ls & rm x",
            "echo 'a;b'",
            "echo \"a\"",
            "echo a\\;rm",
            "ls *",
            "ls ~",
            "ls {a,b}",
            "ls # comment",
            "cat !1",
            "rg --pre sh x",
            "date -s 2020-01-01",
            "find . -delete",
            "find . -exec rm {} +",
            "find . -fprint f",
            "sort -o f g",
            "tee f",
            "ls\nrm x",
            "ls\rrm x",
            "ls\u{b}rm x",
            "ls\u{0}x",
            "GIT_PAGER=x ls",
            "/bin/ls",
            "touch x",
            "",
        ] {
            assert!(!is_known_read_only(cmd), "{cmd:?}");
        }
    }

    #[test]
    fn display_command_quotes_for_the_shell() {
        assert_eq!(
            display_command("/bin/bash", true, "echo 'hi'"),
            r"/bin/bash -lc 'echo '\''hi'\'''"
        );
    }
}
