//! The one mapping from errors to JSON-RPC error objects.

use serde_json::json;

use crate::config::write::ConfigWriteError;
use crate::config::ConfigError;
use crate::core::{CoreError, InvalidThreadId};
use crate::protocol::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    SERVER_OVERLOADED,
};
use crate::protocol::methods::{DecodeError, CLIENT_REQUEST_METHODS};
use crate::rollout::RolloutError;

/// Everything a request handler can fail with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HandlerError {
    #[error(transparent)]
    Core(#[from] CoreError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Rollout(#[from] RolloutError),
    #[error(transparent)]
    ConfigWrite(#[from] ConfigWriteError),
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidParams(String),
    #[error("{0}")]
    Internal(String),
}

/// A thread id that is not one reads as core's `invalid thread id` error, whichever layer met it.
impl From<InvalidThreadId> for HandlerError {
    fn from(error: InvalidThreadId) -> HandlerError {
        HandlerError::Core(CoreError::from(error))
    }
}

pub(crate) fn handler_error(error: &HandlerError) -> ErrorObject {
    match error {
        // Rollout failures read the same whether core or a handler met them: `thread/resume`
        // of a corrupt file names the file and line exactly as `thread/read` does.
        HandlerError::Rollout(rollout) | HandlerError::Core(CoreError::Storage(rollout)) => {
            rollout_error(rollout)
        }
        HandlerError::Core(CoreError::Internal(_)) => {
            ErrorObject::new(INTERNAL_ERROR, error.to_string())
        }
        HandlerError::Internal(message) => ErrorObject::new(INTERNAL_ERROR, message.clone()),
        HandlerError::InvalidParams(message) => ErrorObject::new(INVALID_PARAMS, message.clone()),
        HandlerError::Core(CoreError::LocalImage(image)) => {
            ErrorObject::new(INVALID_PARAMS, image.to_string())
                .with_data(json!({ "reason": image.reason(), "path": image.path() }))
        }
        HandlerError::Core(CoreError::ThreadBusy(_)) => thread_busy(error.to_string()),
        // A request's `config` object with a value of the wrong kind: the params are wrong,
        // and the message names the key.
        HandlerError::Config(ConfigError::InvalidValue { key, .. }) => {
            ErrorObject::new(INVALID_PARAMS, error.to_string()).with_data(json!({ "key": key }))
        }
        HandlerError::Config(ConfigError::Invalid(_) | ConfigError::BadOverride(_)) => {
            ErrorObject::new(INVALID_PARAMS, error.to_string())
        }
        // A wrong field is bad params, named; the data still says what kind of refusal it is.
        HandlerError::ConfigWrite(write @ ConfigWriteError::Field { .. }) => {
            ErrorObject::new(INVALID_PARAMS, error.to_string())
                .with_data(json!({ "config_write_error_code": write.code() }))
        }
        // The reference's code and `config_write_error_code`, which clients branch on.
        HandlerError::ConfigWrite(write) => match write.code() {
            Some(code) => ErrorObject::new(INVALID_REQUEST, error.to_string())
                .with_data(json!({ "config_write_error_code": code })),
            None => ErrorObject::new(INTERNAL_ERROR, error.to_string()),
        },
        // Domain errors keep the reference's code and message: clients parse the texts.
        other => ErrorObject::new(INVALID_REQUEST, other.to_string()),
    }
}

fn rollout_error(error: &RolloutError) -> ErrorObject {
    match error {
        RolloutError::Busy(_) => thread_busy(error.to_string()),
        RolloutError::Corrupt { path, line, .. } => {
            ErrorObject::new(INTERNAL_ERROR, error.to_string())
                .with_data(json!({ "reason": "corrupt_rollout", "path": path, "line": line }))
        }
        RolloutError::Io { .. } | RolloutError::WriterStopped(_) => {
            ErrorObject::new(INTERNAL_ERROR, error.to_string())
        }
        RolloutError::NotFound(_) | RolloutError::UnknownTurn(_) => {
            ErrorObject::new(INVALID_REQUEST, error.to_string())
        }
        RolloutError::Symlink(path) => ErrorObject::new(INVALID_REQUEST, error.to_string())
            .with_data(json!({ "reason": "rollout_is_symlink", "path": path })),
    }
}

fn thread_busy(message: String) -> ErrorObject {
    ErrorObject::new(INVALID_REQUEST, message).with_data(json!({ "reason": "thread_busy" }))
}

pub(crate) fn decode_error(error: &DecodeError) -> ErrorObject {
    match error {
        DecodeError::UnknownMethod(method) => {
            ErrorObject::new(METHOD_NOT_FOUND, format!("Method not found: `{method}`"))
                .with_data(json!({ "method": method, "supported": CLIENT_REQUEST_METHODS }))
        }
        DecodeError::InvalidParams(message) => ErrorObject::new(INVALID_PARAMS, message.clone()),
    }
}

pub(crate) fn overloaded() -> ErrorObject {
    ErrorObject::new(SERVER_OVERLOADED, "Server overloaded; retry later.")
        .with_data(json!({ "reason": "ingress_queue_full", "codexErrorInfo": "server_overloaded" }))
}

pub(crate) fn not_initialized() -> ErrorObject {
    ErrorObject::new(INVALID_REQUEST, "Not initialized")
}

pub(crate) fn already_initialized() -> ErrorObject {
    ErrorObject::new(INVALID_REQUEST, "Already initialized")
}
