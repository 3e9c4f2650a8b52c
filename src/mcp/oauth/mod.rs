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
//! - `error`: `OAuthError`, the error all of them return.
//! - `http`: the bounded, non-redirecting HTTP client for the OAuth endpoints.
//!
//! Tokens are secrets: no error, log line or `Debug` output built here holds one; a failed
//! token request is described by its status and OAuth `error` code only.

mod callback;
mod discovery;
mod error;
mod flow;
mod http;
mod store;

use std::path::{Path, PathBuf};

pub use error::OAuthError;
pub use flow::{start_login, LoginStarted};

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
