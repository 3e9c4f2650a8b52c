//! OAuth for streamable-HTTP MCP servers, as the MCP authorization spec describes it: discover
//! the authorization server from the server's protected-resource metadata, register a public
//! client dynamically, run the authorization-code flow with PKCE (S256) through a loopback
//! redirect on 127.0.0.1, keep the tokens in a 0600 file under the daemon's home and hand the
//! access token to the MCP connection as its bearer, refreshed when it has expired.
//!
//! - `discovery`: protected-resource and authorization-server metadata.
//! - `callback`: the one-shot loopback listener the browser is redirected to.
//! - `flow`: PKCE, registration, the authorization URL, code exchange and refresh.
//! - `store`: the token files.
//!
//! Tokens are secrets: no error, log line or `Debug` output built here holds one; a failed
//! token request is described by its status and OAuth `error` code only.

mod callback;
mod discovery;
mod flow;
mod store;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use flow::{start_login, LoginStarted};

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

/// Where a home keeps its MCP servers' OAuth tokens.
pub fn store_dir(home: &Path) -> PathBuf {
    home.join("mcp_oauth")
}

/// Whether tokens for server `name` at `url` are stored (for its status listing).
pub fn has_tokens(store: &Path, name: &str, url: &str) -> bool {
    store::load(store, name, url).ok().flatten().is_some()
}

/// The access token to send to server `name` at `url`: `None` when nobody logged in, the
/// stored one while it is valid, a refreshed one (stored again) once it has expired.
pub async fn bearer_token(
    store: &Path,
    name: &str,
    url: &str,
) -> Result<Option<String>, OAuthError> {
    let Some(tokens) = store::load(store, name, url)? else {
        return Ok(None);
    };
    if !tokens.expires_soon() {
        return Ok(Some(tokens.access_token.clone()));
    }
    let refreshed = flow::refresh(&tokens).await?;
    store::save(store, name, &refreshed)?;
    Ok(Some(refreshed.access_token.clone()))
}

/// How long one request to an OAuth endpoint may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// The HTTP client for OAuth endpoints: bounded requests, no redirects followed (a redirected
/// token request could carry a code or a refresh token elsewhere).
fn http_client() -> Result<reqwest::Client, String> {
    // reqwest's rustls needs a process-wide crypto provider; a second install is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| error.to_string())
}
