//! `openturn exec`: one turn, headless. It drives the daemon's own server in-process — the same
//! `server::serve` the app-server runs, over an in-memory pipe — speaking the v2 protocol to it,
//! and prints what happens either as JSON events (`--json`, wire-compatible with the reference's
//! `codex exec --json`, so the official TypeScript SDK drives it) or as text for a person.
//!
//! Layout: `args.rs` the command line; `connection.rs` the client end of the pipe; `mapping.rs`
//! notifications → exec events (a pure reducer); `events.rs` the event shapes; `human.rs` the
//! text output; `inputs.rs` the checked inputs; `run.rs` the sequence (initialize, start or resume, one turn, shut down).
//!
//! This module knows only the protocol: the caller hands it a function that serves a
//! connection, so it never sees the configuration or the core.

mod args;
mod connection;
pub mod events;
mod human;
mod inputs;
pub mod mapping;
mod run;

pub use args::{ExecArgs, ExecCommand, CODEX_API_KEY_ENV};
pub use run::run;

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
