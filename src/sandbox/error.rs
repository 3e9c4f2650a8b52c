//! The sandbox layer's errors. Callers branch on `Unsupported` (refuse the command, tell the
//! user) versus the rest (a bad path or a failing system call while preparing).

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// This kernel (or build) cannot enforce the policy completely, so it is refused rather than
    /// weakened.
    #[error("sandbox policy `{policy}` cannot be enforced here: {reason}")]
    Unsupported {
        policy: &'static str,
        reason: String,
    },
    /// A path handed to `prepare` is unusable (relative, missing, not a directory, ...).
    #[error("sandbox path `{path}`: {reason}")]
    InvalidPath { path: PathBuf, reason: String },
    /// A system call failed while building the confinement in the daemon.
    #[error("preparing the sandbox failed while {action}: {source}")]
    Setup {
        action: &'static str,
        #[source]
        source: io::Error,
    },
    /// The Landlock ruleset could not be built.
    #[error("building the Landlock ruleset failed while {action}: {message}")]
    Landlock {
        action: &'static str,
        message: String,
    },
    /// The seccomp filter could not be compiled.
    #[error("compiling the seccomp filter failed: {message}")]
    Seccomp { message: String },
}
