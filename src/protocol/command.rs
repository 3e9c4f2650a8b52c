//! `command/exec`: run an argv outside any thread.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::SandboxPolicy;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecParams {
    /// The argv; must not be empty.
    pub command: Vec<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Variables to set; a `null` value unsets the variable.
    #[serde(default)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    #[serde(default)]
    pub timeout_ms: Option<i64>,
    #[serde(default)]
    pub disable_timeout: bool,
    #[serde(default)]
    pub output_bytes_cap: Option<u64>,
    #[serde(default)]
    pub disable_output_cap: bool,
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// Needed to stream: names the process in `command/exec/outputDelta`.
    #[serde(default)]
    pub process_id: Option<String>,
    #[serde(default)]
    pub stream_stdout_stderr: bool,
    #[serde(default)]
    pub stream_stdin: bool,
    #[serde(default)]
    pub tty: bool,
    /// The PTY's size; only with `tty`.
    #[serde(default)]
    pub size: Option<CommandExecTerminalSize>,
}

/// A PTY's size in character cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecTerminalSize {
    pub rows: u16,
    pub cols: u16,
}

/// `command/exec/write`: bytes for a running command's stdin, and/or closing it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecWriteParams {
    pub process_id: String,
    #[serde(default)]
    pub delta_base64: Option<String>,
    #[serde(default)]
    pub close_stdin: bool,
}

/// `command/exec/resize`: a running PTY command's new size.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResizeParams {
    pub process_id: String,
    pub size: CommandExecTerminalSize,
}

/// `command/exec/terminate`: kills a running command (its `command/exec` then answers).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecTerminateParams {
    pub process_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResponse {
    pub exit_code: i32,
    /// Empty when stdout was streamed.
    pub stdout: String,
    pub stderr: String,
}
