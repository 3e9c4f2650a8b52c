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
    /// A failure to reach the provider at `url`. The URL is kept without its query: a provider
    /// may take its key as a query parameter (Azure's `api-key`), and this error reaches
    /// notifications, rollouts and logs. `message` must not carry the URL (see [`url_free`]).
    pub(super) fn connect(provider: &ProviderInfo, url: &str, message: String) -> ClientError {
        ClientError::Connect {
            provider: provider.display_name().to_string(),
            url: shown_url(url),
            message,
        }
    }

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

/// `url` as it may be shown to the user or logged: without its query and fragment (which can
/// carry a key) and without any user name or password. Text that does not parse as a URL is cut
/// at its first `?` or `#`.
pub(super) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            // Both fail only for URLs that cannot have user info, which then have none.
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("");
            parsed.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_string(),
    }
}

/// `message` with every copy of `url` replaced by its [`shown_url`], and any remaining copy of
/// its query string elided. For errors of libraries that, unlike reqwest, cannot be asked to
/// leave the URL out (tungstenite's "Unable to connect to {url}").
pub(super) fn url_free(message: &str, url: &reqwest::Url) -> String {
    let mut message = message.replace(url.as_str(), &shown_url(url.as_str()));
    if let Some(query) = url.query().filter(|query| !query.is_empty()) {
        message = message.replace(query, "…");
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_url_keeps_no_query_fragment_or_user_info() {
        assert_eq!(
            shown_url("https://user:pw@example.test/openai/responses?api-key=k1&v=2#frag"),
            "https://example.test/openai/responses"
        );
        assert_eq!(shown_url("not a url?api-key=k1"), "not a url");
    }

    #[test]
    fn url_free_leaves_neither_the_url_nor_its_query_in_a_message() {
        let url = reqwest::Url::parse("ws://127.0.0.1:9/v1/responses?api-key=k1").unwrap();
        assert_eq!(
            url_free(&format!("Unable to connect to {url}"), &url),
            "Unable to connect to ws://127.0.0.1:9/v1/responses"
        );
        assert_eq!(url_free("bad target ?api-key=k1", &url), "bad target ?…");
    }
}
