//! `process/*` (experimental API): a client's own processes, started by argv on the daemon's
//! host and named by a handle the client picks; their output and exit come as notifications.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// `process/spawn`: starts a process and answers once it runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessSpawnParams {
    /// The argv; must not be empty.
    pub command: Vec<String>,
    /// The connection's name for the process; refused while a process with it still runs.
    pub process_handle: String,
    /// An absolute working directory.
    pub cwd: String,
    /// Overrides of the daemon's environment; a `null` value unsets the variable.
    #[serde(default)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Absent: the default timeout; `null`: none.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<i64>")]
    pub timeout_ms: Option<Option<i64>>,
    /// Per stream, in bytes. Absent: the default cap; `null`: none.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<u64>")]
    pub output_bytes_cap: Option<Option<u64>>,
    /// Accept `process/writeStdin`.
    #[serde(default)]
    pub stream_stdin: bool,
    /// Send output as `process/outputDelta` rather than in `process/exited`.
    #[serde(default)]
    pub stream_stdout_stderr: bool,
    /// Run on a PTY; implies `streamStdin` and `streamStdoutStderr`.
    #[serde(default)]
    pub tty: bool,
    /// The PTY's initial size; only with `tty`.
    #[serde(default)]
    pub size: Option<ProcessTerminalSize>,
}

/// A field that is present (even as `null`) reads as `Some(value)`; `#[serde(default)]` makes
/// an absent one `None`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// A PTY's size in character cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessTerminalSize {
    pub rows: u16,
    pub cols: u16,
}

/// `process/writeStdin`: bytes for the process's stdin, and/or closing it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessWriteStdinParams {
    pub process_handle: String,
    #[serde(default)]
    pub delta_base64: Option<String>,
    #[serde(default)]
    pub close_stdin: bool,
}

/// `process/resizePty`: a PTY process's new size.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessResizePtyParams {
    pub process_handle: String,
    pub size: ProcessTerminalSize,
}

/// `process/kill`: kills a running process and everything it started.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessKillParams {
    pub process_handle: String,
}

/// Which stream a `process/outputDelta` chunk came from; a PTY's output is `stdout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProcessOutputStream {
    Stdout,
    Stderr,
}

/// `process/outputDelta`: a chunk of a streaming process's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessOutputDeltaNotification {
    pub process_handle: String,
    pub stream: ProcessOutputStream,
    pub delta_base64: String,
    /// True on the stream's last chunk when the cap cut it.
    pub cap_reached: bool,
}

/// `process/exited`: the process ended; the last word about its handle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessExitedNotification {
    pub process_handle: String,
    pub exit_code: i32,
    /// Kept stdout; empty when it was streamed.
    pub stdout: String,
    pub stdout_cap_reached: bool,
    /// Kept stderr; empty when it was streamed.
    pub stderr: String,
    pub stderr_cap_reached: bool,
    /// Output still arrived when the reading stopped, a short while after the exit.
    pub output_drain_timed_out: bool,
}
