//! Errors raised before a response stream exists.

use std::time::Duration;

use super::provider::ProviderInfo;

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
        /// The provider's error code from a JSON body (`insufficient_quota`, ...), if any.
        code: Option<String>,
        retry_after: Option<Duration>,
    },
    #[error("provider `{provider}` is misconfigured: {message}")]
    Config { provider: String, message: String },
}

impl ClientError {
    /// A non-success status: 401 is its own variant (it triggers auth recovery), the rest keep the
    /// provider's message and any `Retry-After`.
    pub(super) fn from_status(
        provider: &ProviderInfo,
        status: u16,
        body: &str,
        retry_after: Option<Duration>,
    ) -> ClientError {
        let provider = provider.display_name().to_string();
        let (message, code) = provider_error(body);
        if status == 401 {
            return ClientError::Unauthorized { provider, message };
        }
        ClientError::Http {
            provider,
            status,
            message,
            code,
            retry_after,
        }
    }

    /// Whether sending the same request again may succeed: connection failures, 429 and 5xx.
    /// Other 4xx say the request itself is wrong, so repeating it cannot help; so does a 429
    /// whose code says the quota is spent (waiting does not refill it).
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Connect { .. } => true,
            ClientError::Http { status: 429, .. } => !self.is_quota_exhausted(),
            ClientError::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// A refusal because the account's quota or plan does not cover the request, as opposed to
    /// a rate limit that passes with time.
    pub fn is_quota_exhausted(&self) -> bool {
        matches!(
            self,
            ClientError::Http { code: Some(code), .. }
                if code == "insufficient_quota" || code == "usage_not_included"
        )
    }

    /// The delay the provider asked for (`Retry-After`), if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Http { retry_after, .. } => *retry_after,
            _ => None,
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

/// The provider's own error message and code from a JSON error body; without a message, the
/// body text (bounded).
fn provider_error(body: &str) -> (String, Option<String>) {
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: Option<Inner>,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        message: Option<String>,
        /// Kept loose: a provider sending a number here must not cost us its message.
        code: Option<serde_json::Value>,
    }
    let inner = serde_json::from_str::<Envelope>(body)
        .ok()
        .and_then(|envelope| envelope.error);
    let (message, code) = match inner {
        Some(inner) => (
            inner.message,
            inner
                .code
                .and_then(|code| code.as_str().map(str::to_string)),
        ),
        None => (None, None),
    };
    let message = message.unwrap_or_else(|| body.trim().chars().take(2000).collect());
    (message, code)
}

/// An error and its causes on one line; reqwest's top-level message alone hides the reason.
pub(super) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}
