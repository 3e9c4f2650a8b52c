//! JSONL persistence of threads, independent of the JSON-RPC protocol.
//!
//! One file per thread under `$OPENTURN_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`.
//! Each line is one [`line::RolloutLine`]; one task owns each open file and writes each line with
//! a single `write`; fsync happens at turn boundaries. Readers tolerate a torn last line.
//! Imports only `wire/` from the crate.

pub mod archive;
pub mod fork;
pub mod index;
pub mod line;
pub mod lock;
pub mod paths;
pub mod reader;
pub mod writer;

pub use index::{IndexEntry, ThreadIndex};
pub use line::{RolloutItem, RolloutLine, SessionMeta};
pub use reader::{read_rollout, RolloutContents};
pub use writer::RolloutWriter;

/// Errors of rollout persistence. Reader errors name the file and, where it applies, the line.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    #[error("rollout I/O error on {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("corrupt rollout {path} at line {line}: {message}")]
    Corrupt {
        path: std::path::PathBuf,
        line: usize,
        message: String,
    },
    #[error("no rollout found for thread id {0}")]
    NotFound(String),
    #[error("the rollout writer for {0} has stopped")]
    WriterStopped(std::path::PathBuf),
    /// Another process (or handle) holds the rollout's write lock.
    #[error("rollout {0} is being written by another openturn process")]
    Busy(std::path::PathBuf),
    #[error("unknown turn id {0}")]
    UnknownTurn(String),
}
