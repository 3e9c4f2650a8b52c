//! Errors of a streamed response, and the classification of provider error payloads.

use std::time::Duration;

/// A provider-reported failure (`response.failed`, `response.incomplete`, `error`), classified so
/// that callers can branch on whether a retry can help.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    #[error("context window exceeded: {0}")]
    ContextWindowExceeded(String),
    #[error("quota exceeded: {0}")]
    QuotaExceeded(String),
    #[error("usage not included in the current plan")]
    UsageNotIncluded,
    #[error("{0}")]
    CyberPolicy(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The model is at capacity (`server_is_overloaded`): asking again at once does not help,
    /// so the turn fails and the client may offer another model.
    #[error("server overloaded: {0}")]
    ServerOverloaded(String),
    /// The provider asks to slow down (`rate_limit_exceeded`, `slow_down`): retryable after the
    /// delay it names, if any.
    #[error("rate limit exceeded: {message}")]
    RateLimited {
        message: String,
        delay: Option<Duration>,
    },
    #[error("incomplete response: {0}")]
    Incomplete(String),
    /// Any other provider failure: the provider said so, nothing disconnected.
    #[error("the provider reported an error: {message}")]
    Retryable {
        message: String,
        delay: Option<Duration>,
    },
}

impl ApiError {
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ApiError::Retryable { .. } | ApiError::RateLimited { .. }
        )
    }

    /// Classifies an error object `{code, message}` from a `response.failed` or `error` event.
    pub fn classify(code: Option<&str>, message: &str) -> ApiError {
        let message = message.to_string();
        match code {
            Some("context_length_exceeded") => ApiError::ContextWindowExceeded(message),
            Some("insufficient_quota") => ApiError::QuotaExceeded(message),
            Some("usage_not_included") => ApiError::UsageNotIncluded,
            Some("cyber_policy") => ApiError::CyberPolicy(if message.is_empty() {
                "This request was flagged by the provider's cyber-security policy.".to_string()
            } else {
                message
            }),
            Some("invalid_prompt") | Some("bio_policy") => ApiError::InvalidRequest(message),
            Some("server_is_overloaded") => ApiError::ServerOverloaded(message),
            Some("rate_limit_exceeded") | Some("slow_down") => {
                let delay = parse_retry_after(&message);
                ApiError::RateLimited { message, delay }
            }
            _ => ApiError::Retryable {
                message,
                delay: None,
            },
        }
    }
}

/// Parses "try again in 11.054s" or "try again in 250ms" out of a provider message.
pub fn parse_retry_after(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let start = lower.find("try again in")? + "try again in".len();
    let rest = lower[start..].trim_start();
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..number_len].parse().ok()?;
    let unit = rest[number_len..].trim_start();
    let seconds = if unit.starts_with("ms") {
        value / 1000.0
    } else if unit.starts_with('s') {
        value
    } else {
        return None;
    };
    Duration::try_from_secs_f64(seconds).ok()
}

/// Why a response stream ended without `response.completed`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StreamError {
    #[error("stream disconnected before completion: {0}")]
    Transport(String),
    #[error("idle timeout waiting for the response stream ({0:?} without an event)")]
    IdleTimeout(Duration),
    #[error("stream closed before response.completed")]
    ClosedBeforeCompleted,
    /// The provider reported a failure; its text stands alone (the stream did not break).
    #[error("{0}")]
    Api(ApiError),
    #[error("response.completed could not be parsed: {0}")]
    BadCompleted(String),
}

impl StreamError {
    /// Whether re-sampling from history may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            StreamError::Api(api) => api.is_retryable(),
            StreamError::BadCompleted(_) => false,
            _ => true,
        }
    }

    /// The provider's suggested delay before retrying, when it gave one.
    pub fn retry_delay(&self) -> Option<Duration> {
        match self {
            StreamError::Api(ApiError::Retryable { delay, .. })
            | StreamError::Api(ApiError::RateLimited { delay, .. }) => *delay,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_parses_seconds_and_milliseconds() {
        assert_eq!(
            parse_retry_after("Rate limit reached. Please try again in 11.054s. Visit..."),
            Some(Duration::from_millis(11054))
        );
        assert_eq!(
            parse_retry_after("try again in 250ms"),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_retry_after("slow down"), None);
    }
}
