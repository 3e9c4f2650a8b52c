//! The decision taken before a command runs: whether it runs, is asked about or is refused,
//! and whether inside the thread's sandbox or outside it, from the thread's approval policy and
//! sandbox mode, the kernel's support and the command line itself (a plain known read-only
//! command needs less). Pure: no I/O, so every combination is unit-tested here.

use super::args::ShellArgs;
use crate::core::settings::{ApprovalPolicy, SandboxMode};

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
}
