//! The account behind `account/*`: whether an API key is stored, storing and removing it, and
//! whether the active provider takes one (`requires_openai_auth`). The file itself is `client::stored_key`'s; this
//! is the door the server goes through.

use std::path::Path;

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

/// Whether the provider takes OpenAI sign-in (`requires_openai_auth`): what `account/read`
/// reports, and whether the stored key means anything to it.
pub fn provider_takes_login(provider: &ProviderInfo) -> bool {
    provider.requires_openai_auth
}
