//! Configuration: `$OPENTURN_HOME/config.toml`, then `-c key=value` overrides, then per-thread
//! overrides from `thread/start`'s `config` object. Keys are dotted paths into the TOML table;
//! override values are parsed as TOML and fall back to plain strings. Each source is checked on
//! its own ([`check`]) before merging, so an error or warning can name the file or flag.
//!
//! Layout: [`load`] reads and layers the sources, [`overrides`] parses a flag or a thread's
//! value into the table, [`typed`] turns the merged table into a [`Config`] ([`resolved`]),
//! [`sections`] reads its structured tables (`[models]`, `[tools]`, `[[skills.config]]`),
//! [`feature_names`] knows the reference's feature names; [`write`] and [`provider_edit`] change
//! the user's file.

mod check;
mod error;
mod feature_names;
pub mod features;
mod keys;
mod load;
mod overrides;
pub mod provider_edit;
mod providers;
mod resolved;
mod sections;
mod skill_keys;
mod typed;
pub mod write;
mod write_edit;
mod write_error;

use std::path::PathBuf;

pub use crate::client::ProviderInfo;

pub use check::{ConfigSource, ConfigWarning};
pub use error::ConfigError;
pub(crate) use feature_names::known_features;
pub use feature_names::{feature_overrides, is_known_feature};
pub use keys::known_keys;
// `write` reaches these as `super::…`.
pub use overrides::parse_override;
use overrides::{json_to_toml, set_dotted};
pub use providers::DEMO_PROVIDER_ID;
pub use resolved::{Config, ConfigLayers};
pub use typed::{DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_SAMPLING_REQUESTS_PER_TURN, DEFAULT_MODEL};

/// `$OPENTURN_HOME`, else `~/.openturn`.
pub fn default_home() -> PathBuf {
    if let Some(home) = std::env::var_os("OPENTURN_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let user_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    user_home.join(".openturn")
}

impl Config {
    /// Whether feature flag `name` is on: set at runtime, else `features.NAME`, else its
    /// default ([`features`]).
    pub fn feature_enabled(&self, name: &str) -> bool {
        features::enabled_in(&self.table, name)
    }

    /// The provider with `id`, or a clear error naming the missing table.
    pub fn provider(&self, id: &str) -> Result<ProviderInfo, ConfigError> {
        self.model_providers
            .get(id)
            .cloned()
            .ok_or_else(|| providers::unknown_provider(id))
    }
}
