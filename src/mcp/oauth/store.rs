//! The token files: one JSON file per server under the home's `mcp_oauth/` folder (0700), the
//! file 0600, replaced atomically. A file records the server's URL, so tokens are never sent to
//! a server whose address changed since the login.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::error::OAuthError;

/// How long before its expiry a token is refreshed, so it does not lapse in flight.
const EXPIRY_MARGIN_SECS: u64 = 30;

/// What a login leaves for later connections.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct StoredTokens {
    /// The MCP server's URL the tokens were issued for.
    pub server_url: String,
    pub client_id: String,
    pub token_endpoint: String,
    /// The `resource` parameter sent with token requests (RFC 8707).
    pub resource: String,
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Seconds since the epoch; `None` when the server gave no lifetime.
    #[serde(default)]
    pub expires_at: Option<u64>,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("server_url", &self.server_url)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl StoredTokens {
    pub fn expires_soon(&self) -> bool {
        self.expires_at
            .is_some_and(|at| now_secs() + EXPIRY_MARGIN_SECS >= at)
    }
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default()
}

fn file_of(store: &Path, name: &str) -> PathBuf {
    // Server names hold only letters, digits, `_` and `-` (the config refuses others).
    store.join(format!("{name}.json"))
}

/// The tokens stored for `name`, if they were issued for `url`.
pub(super) fn load(
    store: &Path,
    name: &str,
    url: &str,
) -> Result<Option<StoredTokens>, OAuthError> {
    let path = file_of(store, name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(OAuthError::Store { path, source }),
    };
    // A file that does not parse is treated as no login: the next login replaces it.
    let tokens: Option<StoredTokens> = serde_json::from_str(&text).ok();
    Ok(tokens.filter(|tokens| tokens.server_url == url))
}

/// Stores `tokens` for `name`: a new 0600 file beside the old, renamed over it.
pub(super) fn save(store: &Path, name: &str, tokens: &StoredTokens) -> Result<(), OAuthError> {
    let path = file_of(store, name);
    let failed = |source| OAuthError::Store {
        path: path.clone(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(store)
        .map_err(failed)?;
    let text = serde_json::to_string_pretty(tokens)
        .map_err(|error| failed(std::io::Error::other(error.to_string())))?;
    let temporary = store.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(failed(error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tokens(url: &str, expires_at: Option<u64>) -> StoredTokens {
        StoredTokens {
            server_url: url.to_string(),
            client_id: "c".to_string(),
            token_endpoint: "http://127.0.0.1:1/token".to_string(),
            resource: url.to_string(),
            access_token: "secret-access".to_string(),
            refresh_token: Some("secret-refresh".to_string()),
            expires_at,
        }
    }

    #[test]
    fn tokens_are_private_bound_to_their_url_and_never_printed() {
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("mcp_oauth");
        save(&store, "web", &tokens("http://a/mcp", None)).unwrap();
        let mode = std::fs::metadata(store.join("web.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(&store).unwrap().permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert!(load(&store, "web", "http://a/mcp").unwrap().is_some());
        assert!(load(&store, "web", "http://b/mcp").unwrap().is_none());
        let shown = format!("{:?}", tokens("http://a/mcp", None));
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn a_token_past_or_near_its_expiry_needs_refreshing() {
        assert!(tokens("u", Some(now_secs())).expires_soon());
        assert!(!tokens("u", Some(now_secs() + 3600)).expires_soon());
        assert!(!tokens("u", None).expires_soon());
    }
}
