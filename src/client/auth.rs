//! Where the API key comes from. The key is read from the environment at request time, so a
//! 401 can recover by reading it again (a user who fixes the variable need not restart).

use super::error::ClientError;
use super::provider::ProviderInfo;

/// A secret that never prints itself.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Reads the provider's key. `Ok(None)` when the provider needs no key.
pub fn read_api_key(provider: &ProviderInfo) -> Result<Option<ApiKey>, ClientError> {
    let Some(env_key) = provider.env_key.as_deref().filter(|k| !k.is_empty()) else {
        return Ok(None);
    };
    match std::env::var(env_key) {
        Ok(value) if !value.trim().is_empty() => Ok(Some(ApiKey(value.trim().to_string()))),
        _ => Err(ClientError::MissingApiKey {
            provider: provider.display_name().to_string(),
            env_key: env_key.to_string(),
        }),
    }
}
