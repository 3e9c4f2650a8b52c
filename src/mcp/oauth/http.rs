//! The HTTP client every OAuth endpoint request goes through (metadata, registration, token),
//! kept apart so the flow does not reach back into its parent module for it.

use std::time::Duration;

/// How long one request to an OAuth endpoint may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// The HTTP client for OAuth endpoints: bounded requests, no redirects followed (a redirected
/// token request could carry a code or a refresh token elsewhere).
pub(super) fn http_client() -> Result<reqwest::Client, String> {
    // reqwest's rustls needs a process-wide crypto provider; a second install is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| error.to_string())
}
