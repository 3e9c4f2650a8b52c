//! Where the API key comes from. The key is read from the environment (or the stored key file)
//! at request time, so a 401 can recover by reading it again (a user who fixes the variable or
//! logs in again need not restart).

use super::api_key::ApiKey;
use super::error::ClientError;
use super::provider::ProviderInfo;
use super::stored_key::read_stored_key;

/// Reads the provider's key. The provider's own environment variable wins; when it has none
/// (`env_key` unset) or the variable is absent, the key stored by `account/login/start` is
/// used. `Ok(None)` when a provider without `env_key` has no stored key either: no auth header.
pub fn read_api_key(provider: &ProviderInfo) -> Result<Option<ApiKey>, ClientError> {
    let env_key = provider.env_key.as_deref().filter(|k| !k.is_empty());
    if let Some(env_key) = env_key {
        if let Ok(value) = std::env::var(env_key) {
            if !value.trim().is_empty() {
                return Ok(Some(ApiKey::new(value.trim().to_string())));
            }
        }
    }
    let stored = match provider.stored_key_file.as_deref() {
        Some(file) => read_stored_key(file).map_err(|error| ClientError::Config {
            provider: provider.display_name().to_string(),
            message: error.to_string(),
        })?,
        None => None,
    };
    match (stored, env_key) {
        (Some(key), _) => Ok(Some(key)),
        (None, None) => Ok(None),
        (None, Some(env_key)) => Err(ClientError::MissingApiKey {
            provider: provider.display_name().to_string(),
            env_key: env_key.to_string(),
        }),
    }
}

/// Whether the provider has a key of its own in the environment (its `env_key` variable set).
pub fn has_env_api_key(provider: &ProviderInfo) -> bool {
    provider
        .env_key
        .as_deref()
        .filter(|k| !k.is_empty())
        .and_then(|k| std::env::var(k).ok())
        .is_some_and(|value| !value.trim().is_empty())
}
