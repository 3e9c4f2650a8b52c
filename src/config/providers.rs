//! The providers configuration knows without a table (`demo`, beside the built-in `openai`), and
//! the rule a provider table must follow once every source is merged: it says where to send.
//!
//! `demo` is the loopback mock provider the binary starts in-process when `model_provider` is
//! `demo` at startup; the loader only learns its address ([`Config::attach_demo_provider`]) and
//! keeps it across per-thread overrides. A `[model_providers.demo]` table of the user's own
//! replaces it, like any table replaces a built-in of the same name.
//!
//! A table without `base_url` would silently send to OpenAI (the field's default), which is
//! never what a table named `local` or `azure` meant: that is an error naming the table and
//! where it was written, unless the table's `name` says OpenAI, which gets a warning (and the
//! table `openai` itself, which is the built-in provider adjusted, gets neither).

use toml::{Table, Value};

use crate::client::ProviderInfo;

use super::check::{ConfigSource, ConfigWarning};
use super::error::ConfigError;
use super::resolved::{Config, ConfigLayers};

/// The id of the built-in offline provider.
pub const DEMO_PROVIDER_ID: &str = "demo";

impl Config {
    /// Whether the binary should start the built-in `demo` provider for this configuration:
    /// `model_provider` is `demo` and no `[model_providers.demo]` table replaces it.
    pub fn wants_demo_provider(&self) -> bool {
        self.model_provider_id == DEMO_PROVIDER_ID && !self.has_provider_table(DEMO_PROVIDER_ID)
    }

    /// Registers the running `demo` provider at `base_url` (a loopback address), for this
    /// configuration and every per-thread copy made from it.
    pub fn attach_demo_provider(&mut self, base_url: &str) {
        self.demo_base_url = Some(base_url.to_string());
        self.insert_demo_provider();
    }

    /// Puts the `demo` provider among the providers when it runs and no table replaces it.
    pub(super) fn insert_demo_provider(&mut self) {
        let Some(base_url) = self.demo_base_url.clone() else {
            return;
        };
        if self.has_provider_table(DEMO_PROVIDER_ID) {
            return;
        }
        let mut demo = ProviderInfo::openai();
        demo.id = DEMO_PROVIDER_ID.to_string();
        demo.name = "openturn demo (offline, scripted)".to_string();
        demo.base_url = base_url;
        demo.env_key = None;
        // The answers are computed in-process: a failure is a bug to see at once, not a
        // network hiccup to wait out.
        demo.request_max_retries = 0;
        demo.stream_max_retries = 0;
        demo.stored_key_file = None;
        // It takes no key: `account/read` must not send a client (the Codex TUI) to a sign-in
        // screen before its first prompt.
        demo.requires_openai_auth = false;
        self.model_providers
            .insert(DEMO_PROVIDER_ID.to_string(), demo);
        // The tour shows an edit, whatever the model's own tool set (gpt-5, the default, is
        // offered no `apply_patch`): the demo offers the tool unless `[tools]` says otherwise.
        let mut tools = self.model_catalog.tool_config().clone();
        if !tools.switches.contains_key("apply_patch") {
            tools.switches.insert("apply_patch".to_string(), true);
            let catalog = (*self.model_catalog).clone().with_tool_config(tools);
            self.model_catalog = std::sync::Arc::new(catalog);
        }
    }

    fn has_provider_table(&self, id: &str) -> bool {
        self.table
            .get("model_providers")
            .and_then(|providers| providers.get(id))
            .is_some()
    }
}

/// The error for a provider id nothing defines; `demo` says how to start it.
pub(super) fn unknown_provider(id: &str) -> ConfigError {
    if id == DEMO_PROVIDER_ID {
        ConfigError::DemoNotStarted
    } else {
        ConfigError::UnknownProvider(id.to_string())
    }
}

/// Every merged `[model_providers.X]` table must say where to send: an error for one without
/// `base_url`, a warning when its id or `name` says it is OpenAI (whose address is the default).
/// `flags` are the `-c` overrides as given, to name the one that wrote a table.
pub(super) fn check_provider_tables(
    merged: &Table,
    layers: &ConfigLayers,
    flags: &[String],
) -> Result<Vec<ConfigWarning>, ConfigError> {
    let file = ConfigSource::File(layers.user_file.clone());
    check_tables(merged, |id| {
        source_of(id, layers, flags).unwrap_or_else(|| file.clone())
    })
}

/// The same rule for the tables a thread's `config` added (those of `base` were checked when
/// the daemon loaded its configuration).
pub(super) fn check_thread_provider_tables(
    base: &Table,
    merged: &Table,
) -> Result<Vec<ConfigWarning>, ConfigError> {
    let known = |id: &str| {
        base.get("model_providers")
            .and_then(|providers| providers.get(id))
            .is_some()
    };
    let Some(providers) = merged.get("model_providers").and_then(Value::as_table) else {
        return Ok(Vec::new());
    };
    let added: Table = providers
        .iter()
        .filter(|(id, _)| !known(id))
        .map(|(id, table)| (id.clone(), table.clone()))
        .collect();
    let mut only_added = Table::new();
    only_added.insert("model_providers".to_string(), Value::Table(added));
    check_tables(&only_added, |_| ConfigSource::ThreadConfig)
}

fn check_tables(
    merged: &Table,
    source_of: impl Fn(&str) -> ConfigSource,
) -> Result<Vec<ConfigWarning>, ConfigError> {
    let mut warnings = Vec::new();
    let Some(providers) = merged.get("model_providers").and_then(Value::as_table) else {
        return Ok(warnings);
    };
    for (id, provider) in providers {
        let Some(provider) = provider.as_table() else {
            continue;
        };
        // A table named `openai` adjusts the built-in OpenAI provider (exec points its key at
        // CODEX_API_KEY that way): OpenAI's address is what it means.
        if provider.contains_key("base_url") || id == "openai" {
            continue;
        }
        let source = source_of(id);
        let name = provider.get("name").and_then(Value::as_str).unwrap_or("");
        let says_openai = [id.as_str(), name]
            .iter()
            .any(|text| text.to_ascii_lowercase().contains("openai"));
        if says_openai {
            let path = match &source {
                ConfigSource::File(path) => Some(path.clone()),
                _ => None,
            };
            warnings.push(ConfigWarning {
                summary: format!(
                    "[model_providers.{id}] in {source} has no `base_url`, so it sends to \
                     OpenAI (https://api.openai.com/v1); write base_url to say so"
                ),
                path,
            });
            continue;
        }
        return Err(ConfigError::ProviderWithoutBaseUrl {
            table: format!("[model_providers.{id}]"),
            source_name: source.to_string(),
        });
    }
    Ok(warnings)
}

/// Where the table `model_providers.<id>` was written: config.toml, else the first `-c` flag
/// setting a key of it.
fn source_of(id: &str, layers: &ConfigLayers, flags: &[String]) -> Option<ConfigSource> {
    let in_table = |table: &Table| {
        table
            .get("model_providers")
            .and_then(|providers| providers.get(id))
            .is_some()
    };
    if in_table(&layers.user_table) {
        return Some(ConfigSource::File(layers.user_file.clone()));
    }
    let prefix = format!("model_providers.{id}");
    flags
        .iter()
        .find(|raw| {
            raw.split_once('=').is_some_and(|(key, _)| {
                let key = key.trim();
                key == prefix || key.starts_with(&format!("{prefix}."))
            })
        })
        .map(|raw| ConfigSource::Flag(raw.clone()))
}
