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
mod error;
pub mod events;
mod human;
mod inputs;
pub mod mapping;
mod run;

pub use args::{ExecArgs, ExecCommand, CODEX_API_KEY_ENV};
pub use error::ExecError;
pub use run::{run, ExecEnd};
