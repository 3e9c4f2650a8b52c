//! The models each provider says it serves (`GET {base_url}/models`), kept for a while so a
//! model picker opened again does not ask again. Only answers are kept: a provider that failed
//! to answer is asked again next time (it may have been starting up), and the caller falls back
//! to the configured models meanwhile.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::client::{ModelClient, ProviderInfo};

/// How long a provider's list is reused: long enough for a picker opened repeatedly, short
/// enough that a model loaded into a local server shows up within minutes.
const LIST_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// A provider's id and base URL: a thread's `config` may point the same id elsewhere.
type ProviderKey = (String, String);

/// When a list was given, and the ids in it.
type ListedIds = (Instant, Vec<String>);

/// The providers' lists, by provider.
#[derive(Default)]
pub struct ProviderModelLists {
    lists: Mutex<HashMap<ProviderKey, ListedIds>>,
}

impl ProviderModelLists {
    fn lists(&self) -> MutexGuard<'_, HashMap<ProviderKey, ListedIds>> {
        match self.lists.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The ids `provider` lists, from a recent answer or by asking it now (bounded by the
    /// client's short timeout); `None` when it could not say.
    pub async fn model_ids(
        &self,
        client: &ModelClient,
        provider: &ProviderInfo,
    ) -> Option<Vec<String>> {
        let key = (provider.id.clone(), provider.base_url.clone());
        if let Some((at, ids)) = self.lists().get(&key) {
            if at.elapsed() < LIST_LIFETIME {
                return Some(ids.clone());
            }
        }
        // Not held across the request: two pickers opened at once may both ask, which is
        // cheaper than making every other provider's lookup wait on a slow one.
        match client.list_model_ids(provider).await {
            Ok(ids) => {
                let mut lists = self.lists();
                // Expired entries go as new ones come, so the map never outgrows the providers.
                lists.retain(|_, (at, _)| at.elapsed() < LIST_LIFETIME);
                lists.insert(key, (Instant::now(), ids.clone()));
                Some(ids)
            }
            Err(error) => {
                tracing::warn!(
                    provider = provider.display_name(),
                    %error,
                    "the provider did not list its models; offering the configured ones"
                );
                None
            }
        }
    }
}
