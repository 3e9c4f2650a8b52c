//! Errors raised before a response stream exists.

use std::time::Duration;

/// Why a request could not be turned into a response stream. Every variant names the provider
/// so the user knows which configuration to fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    #[error("missing API key for provider `{provider}`: set the environment variable {env_key}")]
    MissingApiKey { provider: String, env_key: String },
    #[error("could not reach provider `{provider}` at {url}: {message}")]
    Connect {
        provider: String,
        url: String,
        message: String,
    },
    #[error("provider `{provider}` rejected the credentials (HTTP 401): {message}")]
    Unauthorized { provider: String, message: String },
    #[error("provider `{provider}` answered HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("provider `{provider}` is misconfigured: {message}")]
    Config { provider: String, message: String },
}

impl ClientError {
    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Connect { .. } => true,
            ClientError::Http { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            ClientError::Unauthorized { .. } => Some(401),
            _ => None,
        }
    }
}
