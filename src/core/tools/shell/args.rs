//! What an `exec_command` call carries and how the tool is offered: the arguments the model
//! sends ([`ShellArgs`]) and the definition it is given ([`spec`]), in the reference's names.

use serde::Deserialize;
use serde_json::{json, Value};

pub(crate) const TOOL_NAME: &str = "exec_command";

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
