//! Where the API key comes from. The key is read from the environment (or the stored key file)
//! at request time, so a 401 can recover by reading it again (a user who fixes the variable or
//! logs in again need not restart).

use super::api_key::ApiKey;
use super::error::ClientError;
use super::provider::ProviderInfo;
use super::stored_key::read_stored_key;

/// Reads the provider's key. The provider's own environment variable wins. A provider with
/// `requires_openai_auth` (the built-in `openai` one, or any that sets it) otherwise takes the key
/// stored by `account/login/start`; no other provider ever receives that key, so a stored OpenAI
/// key does not leak to a local or third-party server. `Ok(None)`: no auth header (a provider
/// with neither `env_key` nor a stored key it may use). A provider with `env_key` whose variable
/// is unset and no stored key it may use is an error naming the variable.
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
        Some(file) if provider.requires_openai_auth => {
            read_stored_key(file).map_err(|error| ClientError::Config {
                provider: provider.display_name().to_string(),
                message: error.to_string(),
            })?
        }
        _ => None,
    };
    match (stored, env_key) {
        (Some(key), _) => Ok(Some(key)),
        (None, Some(env_key)) => Err(ClientError::MissingApiKey {
            provider: provider.display_name().to_string(),
            env_key: env_key.to_string(),
        }),
        // Not logged in either: the request goes without a key and the provider says whether
        // it needs one (as the reference does).
        (None, None) => Ok(None),
    }
}
