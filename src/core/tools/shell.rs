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
//! kernel cannot enforce the thread's sandbox, the rules (see [`gate()`]) fall back to what needs
//! no sandbox: plain known read-only commands run, anything else only after the user approved
//! it, and with approval `never` it is refused. Where only the sandbox's fallback mode is
//! available, the thread is warned once which protections that mode lacks. The command's
//! environment is what `shell_environment_policy` gives ([`super::super::shell_env`]). Every
//! command is started by the supervisor (`crate::supervisor`): when its leader exits, is terminated or is interrupted, everything it
//! started is killed, even what left its process group.
//!
//! Layout: [`args`](mod@args) is the call's shape and the tool's definition;
//! [`gate`](mod@gate) decides, from the thread's policies, whether a command runs, is asked
//! about or is refused, and whether confined; [`invocation`] is one resolved run; [`consent`]
//! warns, refuses and asks the user; [`execute`](mod@execute) starts the command and answers
//! with its output. [`run`] strings them together.

mod args;
mod consent;
mod execute;
mod gate;
mod invocation;

use std::path::{Path, PathBuf};

use super::super::ids::ItemId;
use super::super::sandboxing::CommandSandbox;
use super::handle::TurnHandle;
use super::output::ToolOutput;
use consent::{ask_approval, refuse, warn_fallback_once, warn_unsupported_once};
use execute::execute;
use gate::{gate, Gate};
use invocation::{display_command, user_shell, Invocation};

pub(crate) use args::{spec, ShellArgs, TOOL_NAME};

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
