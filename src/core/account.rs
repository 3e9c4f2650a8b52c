//! The account behind `account/*`: whether an API key is stored, storing and removing it, and
//! whether the active provider still needs one. The file itself is `client::stored_key`'s; this
//! is the door the server goes through.

use std::path::Path;

use crate::client::auth::has_env_api_key;
use crate::client::stored_key::{
    read_stored_key, remove_stored_key, stored_key_path, write_stored_key, StoredKeyError,
};
use crate::client::ApiKey;
use crate::client::ProviderInfo;

/// Whether `home` holds a stored API key.
pub fn has_stored_api_key(home: &Path) -> Result<bool, StoredKeyError> {
    Ok(read_stored_key(&stored_key_path(home))?.is_some())
}

/// Stores `key` (already checked to be non-empty) as the home's API key.
pub fn store_api_key(home: &Path, key: String) -> Result<(), StoredKeyError> {
    write_stored_key(&stored_key_path(home), &ApiKey::new(key))
}

/// Removes the stored key; `Ok(false)` when there was none.
pub fn remove_api_key(home: &Path) -> Result<bool, StoredKeyError> {
    remove_stored_key(&stored_key_path(home))
}

/// A provider that names an environment variable for its key, with that variable unset: it
/// can only work with a stored key, so a client should offer to log in.
pub fn provider_wants_login(provider: &ProviderInfo) -> bool {
    provider.env_key.as_deref().is_some_and(|k| !k.is_empty()) && !has_env_api_key(provider)
}
