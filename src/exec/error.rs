//! Why `openturn exec` could not run. In a file of its own because the connection, the inputs
//! and the run all report it.

use std::path::PathBuf;

/// Why exec could not run a turn at all (a turn that runs and fails is not an error: it is
/// reported as `turn.failed` and exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("no prompt: give one as an argument or on stdin")]
    NoPrompt,
    #[error("reading the prompt from stdin: {0}")]
    ReadStdin(std::io::Error),
    #[error("--output-schema {path}: {reason}")]
    OutputSchema { path: PathBuf, reason: String },
    #[error("--sandbox `{0}`: expected read-only, workspace-write or danger-full-access")]
    BadSandbox(String),
    #[error("--cd {path}: {source}")]
    BadDirectory {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{method} failed: {message}")]
    Rejected { method: String, message: String },
    #[error("the in-process server closed the connection before the turn ended")]
    ServerGone,
    #[error("talking to the in-process server: {0}")]
    Protocol(String),
    #[error("writing {path}: {source}")]
    WriteOutput {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Server(String),
}
