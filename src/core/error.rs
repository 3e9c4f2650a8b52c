//! Core errors: what a request to core can fail with, and how a turn failed.

use serde::{Deserialize, Serialize};

use crate::rollout::RolloutError;

impl From<super::ids::InvalidThreadId> for CoreError {
    fn from(error: super::ids::InvalidThreadId) -> CoreError {
        CoreError::InvalidThreadId(error.to_string())
    }
}

/// Errors of core operations requested by the server. Messages follow the reference's texts,
/// which clients parse.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("thread not found: {0}")]
    ThreadNotFound(String),
    #[error("invalid thread id: {0}")]
    InvalidThreadId(String),
    #[error("no rollout found for thread id {0}")]
    NoRollout(String),
    #[error("no active turn to interrupt")]
    NoActiveTurnToInterrupt,
    #[error("no active turn to steer")]
    NoActiveTurnToSteer,
    #[error("expected active turn id {expected} but found {active}")]
    InterruptTurnMismatch { expected: String, active: String },
    #[error("expected active turn id `{expected}` but found `{active}`")]
    SteerTurnMismatch { expected: String, active: String },
    /// `thread/compact/start` while a turn runs: compaction replaces the history the turn is
    /// using, so it waits for no one and is refused instead.
    #[error("turn {0} is running on this thread; compact after it ends, or interrupt it first")]
    TurnRunning(String),
    #[error("unknown model provider `{0}`: add a [model_providers.{0}] table to config.toml")]
    UnknownProvider(String),
    #[error("{0}")]
    InvalidInput(String),
    /// A local image of the input cannot be sent; the input was not accepted.
    #[error(transparent)]
    LocalImage(#[from] super::input::LocalImageError),
    /// Another process holds the thread's rollout lock; it can be read, not resumed here.
    #[error("thread {0} is in use by another openturn process; it can be read with thread/read but not resumed until that process releases it")]
    ThreadBusy(String),
    /// Reading or writing a rollout failed; the typed cause lets callers tell a corrupt line
    /// (file and line) from an I/O failure.
    #[error(transparent)]
    Storage(#[from] RolloutError),
    /// A blocking worker (rollout I/O off the runtime) panicked or was cancelled.
    #[error("internal error: {0}")]
    Internal(String),
    #[error("could not start: {0}")]
    Startup(String),
}

/// The category of a turn failure, mirrored to the protocol's `codexErrorInfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnErrorKind {
    ContextWindowExceeded,
    UsageLimitExceeded,
    /// The provider asked to slow down and the retries did not get through.
    RateLimitExceeded,
    ServerOverloaded,
    Unauthorized,
    BadRequest,
    InternalServerError,
    HttpConnectionFailed {
        status: Option<u16>,
    },
    ResponseStreamDisconnected {
        status: Option<u16>,
    },
    ResponseTooManyFailedAttempts {
        status: Option<u16>,
    },
    Other,
}

/// Why a turn failed (or, with `will_retry`, why a retry is happening).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnError {
    pub message: String,
    pub kind: TurnErrorKind,
    #[serde(default)]
    pub details: Option<String>,
}
