//! Rollout errors and the one way rollout files are opened (never through a final symbolic
//! link). In a file of its own because every part of the rollout layer uses them.

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
