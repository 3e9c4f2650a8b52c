//! The one error type of MCP OAuth: why a login or a token refresh failed. A leaf module so the
//! flow, discovery, callback and store modules can all return it without importing each other
//! or their parent.

use std::path::PathBuf;

/// Why a login or a token refresh failed. The texts are for the user and hold no secret.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("OAuth metadata discovery failed for {url}: {reason}")]
    Discovery { url: String, reason: String },
    #[error("client registration failed: {0}")]
    Registration(String),
    #[error("the token endpoint refused the request: {0}")]
    TokenEndpoint(String),
    #[error("the authorization server answered the login with an error: {0}")]
    Denied(String),
    #[error("timed out waiting for OAuth callback")]
    TimedOut,
    #[error("the login was cancelled")]
    Cancelled,
    #[error("the OAuth callback listener failed: {0}")]
    Callback(std::io::Error),
    #[error("could not keep the OAuth tokens in {path}: {source}")]
    Store {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
