//! JSONL persistence of threads, independent of the JSON-RPC protocol.
//!
//! One file per thread under `$OPENTURN_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`.
//! Each line is one [`line::RolloutLine`]; one task owns each open file and writes each line with
//! a single `write`; fsync happens at turn boundaries. Readers tolerate a torn last line.
//! Imports only `wire/` from the crate.

pub mod archive;
pub mod fork;
pub mod index;
mod index_repair;
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
    /// Rollouts are opened without following a final symbolic link: a link planted in the
    /// sessions folder must not make a thread's appends land in some other file.
    #[error("rollout {0} is a symbolic link; openturn does not follow links to rollout files")]
    Symlink(std::path::PathBuf),
}

impl RolloutError {
    /// The error of opening the rollout at `path`: a refused symbolic link (ELOOP under
    /// `O_NOFOLLOW`) says so, anything else is I/O.
    pub(crate) fn opening(path: &std::path::Path, source: std::io::Error) -> RolloutError {
        #[cfg(unix)]
        if source.raw_os_error() == Some(libc::ELOOP) {
            return RolloutError::Symlink(path.to_path_buf());
        }
        RolloutError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Open options that refuse a symbolic link as the last component of the path.
pub(crate) fn no_follow(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
}
