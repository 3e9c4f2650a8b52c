//! How a turn's failures read to the client: the error kind and message for a stream that
//! broke, a request that could not be sent, or a turn that asked for too many requests. Shared
//! by the turn loop and compaction, so it lives in its own file.

use crate::client::ClientError;
use crate::wire::StreamError;

use super::super::error::{TurnError, TurnErrorKind};

pub(super) fn stream_turn_error(error: &StreamError, retries: u32) -> TurnError {
    use crate::wire::ApiError;
    let kind = match error {
        StreamError::Api(ApiError::ContextWindowExceeded(_)) => {
            TurnErrorKind::ContextWindowExceeded
        }
        StreamError::Api(ApiError::QuotaExceeded(_))
        | StreamError::Api(ApiError::UsageNotIncluded) => TurnErrorKind::UsageLimitExceeded,
        StreamError::Api(ApiError::ServerOverloaded(_)) => TurnErrorKind::ServerOverloaded,
        StreamError::Api(ApiError::RateLimited { .. }) => TurnErrorKind::RateLimitExceeded,
        StreamError::Api(ApiError::InvalidRequest(_)) => TurnErrorKind::BadRequest,
        StreamError::Api(_) => TurnErrorKind::Other,
        _ if retries > 0 => TurnErrorKind::ResponseTooManyFailedAttempts { status: None },
        _ => TurnErrorKind::ResponseStreamDisconnected { status: None },
    };
    TurnError {
        message: error.to_string(),
        kind,
        details: None,
    }
}

/// The turn hit `max_sampling_requests_per_turn` while the model still wanted to go on.
pub(super) fn too_many_requests_error(max_requests: u32) -> TurnError {
    TurnError {
        message: format!(
            "the turn was stopped after {max_requests} sampling requests while the model still \
             asked to continue; raise max_sampling_requests_per_turn in config.toml if this \
             task needs more"
        ),
        kind: TurnErrorKind::Other,
        details: None,
    }
}

/// What a client sees when no stream could be opened. A status the provider answered travels
/// with the info (`httpStatusCode`), so a client can tell a rejected key (401) or a rate limit
/// that outlasted the retries (429) from a billing problem, which only a quota code means.
pub(super) fn client_turn_error(error: &ClientError) -> TurnError {
    let kind = match error {
        ClientError::MissingApiKey { .. } => TurnErrorKind::Unauthorized,
        ClientError::Unauthorized { .. } => {
            TurnErrorKind::HttpConnectionFailed { status: Some(401) }
        }
        ClientError::Http { .. } if error.is_quota_exhausted() => TurnErrorKind::UsageLimitExceeded,
        ClientError::Http { status: 429, .. } => {
            TurnErrorKind::ResponseTooManyFailedAttempts { status: Some(429) }
        }
        ClientError::Http { status, .. } if *status >= 500 => TurnErrorKind::InternalServerError,
        ClientError::Http { status, .. } if *status == 400 => TurnErrorKind::BadRequest,
        ClientError::Http { status, .. } => TurnErrorKind::HttpConnectionFailed {
            status: Some(*status),
        },
        ClientError::Connect { .. } => TurnErrorKind::HttpConnectionFailed { status: None },
        ClientError::Config { .. } => TurnErrorKind::Other,
    };
    TurnError {
        message: error.to_string(),
        kind,
        details: None,
    }
}
