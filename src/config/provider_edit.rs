//! The config.toml edits behind `modelProvider/default/set` and `modelProvider/config/write`:
//! which provider may become the default, what a gateway's name, address and key variable
//! may be, and the id a new gateway gets. Produces [`ConfigEdit`]s for the one writer
//! ([`super::write`]); knows nothing of the wire.
//!
//! The rules follow the reference's: names and values are trimmed; a name may not be empty; a
//! base URL is `http(s)` without credentials, query or fragment; a key variable is a shell
//! identifier; a new gateway's id is its name made lowercase with every other run of
//! characters a `-` (`custom` when nothing is left, `-2`, `-3`… when taken). One rule is
//! openturn's own: a gateway always keeps a base URL, since a provider table without one is
//! refused at load ([`super::providers`]).

use serde_json::{json, Map, Value as Json};

use super::write::{ConfigEdit, ConfigWriteError, MergeStrategy};
use super::{Config, DEMO_PROVIDER_ID};

/// The provider ids that exist without a table of the user's; no gateway may take them.
const BUILT_IN_IDS: &[&str] = &["openai", DEMO_PROVIDER_ID];

/// A gateway's fields to change. `None` keeps a field; for the nullable ones `Some(None)`
/// removes it.
#[derive(Debug, Clone, Default)]
pub struct GatewayPatch {
    /// The user's provider table to edit; `None` creates a new one.
    pub provider_id: Option<String>,
    pub name: Option<String>,
    pub base_url: Option<Option<String>>,
    pub env_key: Option<Option<String>>,
}

fn invalid(field: &'static str, message: impl Into<String>) -> ConfigWriteError {
    ConfigWriteError::Field {
        field,
        message: message.into(),
        not_found: false,
    }
}

/// The edit making `provider_id` the default for new threads; refused unless `config` (the
/// file as it is now) defines that provider.
pub fn default_provider_edit(
    config: &Config,
    provider_id: &str,
) -> Result<ConfigEdit, ConfigWriteError> {
    if !config.model_providers.contains_key(provider_id) {
        return Err(invalid(
            "providerId",
            format!("Model provider `{provider_id}` is not configured."),
        ));
    }
    Ok(ConfigEdit {
        key_path: "model_provider".to_string(),
        value: Json::String(provider_id.to_string()),
        merge: MergeStrategy::Replace,
    })
}

/// The edit `patch` asks of the user's config.toml (as `config` read it), and the id of the
/// provider it writes.
pub fn gateway_edit(
    config: &Config,
    patch: GatewayPatch,
) -> Result<(String, ConfigEdit), ConfigWriteError> {
    let name = patch.name.map(|name| checked_name(&name)).transpose()?;
    let base_url = patch
        .base_url
        .map(|url| url.map(|url| checked_base_url(&url)).transpose())
        .transpose()?;
    let env_key = patch
        .env_key
        .map(|key| key.map(|key| checked_env_key(&key)).transpose())
        .transpose()?;
    if matches!(base_url, Some(None)) {
        return Err(invalid(
            "settings.baseUrl",
            "openturn needs a base URL for a custom provider: without one it would send to \
             OpenAI.",
        ));
    }
    match patch.provider_id {
        Some(id) => edit_existing(config, id, name, base_url, env_key),
        None => create(config, name, base_url, env_key),
    }
}

fn edit_existing(
    config: &Config,
    id: String,
    name: Option<String>,
    base_url: Option<Option<String>>,
    env_key: Option<Option<String>>,
) -> Result<(String, ConfigEdit), ConfigWriteError> {
    let in_user_file = config
        .layers
        .user_table
        .get("model_providers")
        .and_then(|tables| tables.get(&id))
        .is_some_and(toml::Value::is_table);
    if !in_user_file {
        if BUILT_IN_IDS.contains(&id.as_str()) {
            return Err(invalid(
                "settings.providerId",
                "A custom provider or gateway cannot use a built-in provider ID.",
            ));
        }
        return Err(ConfigWriteError::Field {
            field: "settings.providerId",
            message: "Unknown provider ID.".to_string(),
            not_found: true,
        });
    }
    let mut fields = Map::new();
    if let Some(name) = name {
        fields.insert("name".to_string(), Json::String(name));
    }
    if let Some(base_url) = base_url {
        fields.insert("base_url".to_string(), json!(base_url));
    }
    if let Some(env_key) = env_key {
        fields.insert("env_key".to_string(), json!(env_key));
    }
    // Merged into the `model_providers` table rather than addressed by a dotted path, so an id
    // holding a `.` (a quoted key in the file) is edited like any other.
    let mut by_id = Map::new();
    by_id.insert(id.clone(), Json::Object(fields));
    let edit = ConfigEdit {
        key_path: "model_providers".to_string(),
        value: Json::Object(by_id),
        merge: MergeStrategy::Upsert,
    };
    Ok((id, edit))
}

fn create(
    config: &Config,
    name: Option<String>,
    base_url: Option<Option<String>>,
    env_key: Option<Option<String>>,
) -> Result<(String, ConfigEdit), ConfigWriteError> {
    let name = name.ok_or_else(|| invalid("settings.name", "Enter a provider name."))?;
    let slug = slug_of(&name);
    if BUILT_IN_IDS.contains(&slug.as_str()) {
        return Err(invalid(
            "settings.name",
            "This name is reserved for a built-in provider. Enter a different custom provider \
             name.",
        ));
    }
    let Some(Some(base_url)) = base_url else {
        return Err(invalid(
            "settings.baseUrl",
            "A base URL is required to create a custom provider.",
        ));
    };
    let taken = |id: &str| {
        config.model_providers.contains_key(id)
            || config
                .layers
                .user_table
                .get("model_providers")
                .and_then(|tables| tables.get(id))
                .is_some()
    };
    let id = std::iter::once(slug.clone())
        .chain((2..).map(|n| format!("{slug}-{n}")))
        .find(|candidate| !taken(candidate))
        .unwrap_or(slug);
    let mut table = Map::new();
    table.insert("base_url".to_string(), Json::String(base_url));
    if let Some(Some(env_key)) = env_key {
        table.insert("env_key".to_string(), Json::String(env_key));
    }
    table.insert("name".to_string(), Json::String(name));
    table.insert(
        "wire_api".to_string(),
        Json::String("responses".to_string()),
    );
    // The id is lowercase letters, digits and `-`: a plain key in a dotted path.
    let edit = ConfigEdit {
        key_path: format!("model_providers.{id}"),
        value: Json::Object(table),
        merge: MergeStrategy::Replace,
    };
    Ok((id, edit))
}

fn checked_name(name: &str) -> Result<String, ConfigWriteError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(invalid("settings.name", "Enter a provider name."));
    }
    Ok(name.to_string())
}

/// An `http(s)` address with a host and no user info, query or fragment (which could carry a
/// secret, and which the summary would have to hide).
fn checked_base_url(url: &str) -> Result<String, ConfigWriteError> {
    let url = url.trim();
    let refused = || {
        invalid(
            "settings.baseUrl",
            "Enter an HTTP(S) base URL without credentials, a query, or a fragment.",
        )
    };
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(refused)?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') || url.contains(['?', '#', ' ']) {
        return Err(refused());
    }
    Ok(url.to_string())
}

/// A name a shell could export: a letter or `_`, then letters, digits and `_`.
fn checked_env_key(key: &str) -> Result<String, ConfigWriteError> {
    let key = key.trim();
    let mut chars = key.chars();
    let starts_well = chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_');
    if !starts_well || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(invalid(
            "settings.envKey",
            "Invalid API key environment variable name.",
        ));
    }
    Ok(key.to_string())
}

/// A new gateway's id from its name: ASCII letters and digits, lowercased, every other run of
/// characters one `-`, none at either end.
fn slug_of(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "custom".to_string()
    } else {
        slug.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_made_from_names_as_the_reference_makes_them() {
        assert_eq!(slug_of("Brand New"), "brand-new");
        assert_eq!(slug_of("  Ünïcode!! Name__x "), "n-code-name-x");
        assert_eq!(slug_of("!!!"), "custom");
        assert_eq!(slug_of("OpenAI"), "openai");
    }

    #[test]
    fn addresses_and_key_names_are_checked() {
        assert_eq!(
            checked_base_url(" https://example.com/v1/ ").unwrap(),
            "https://example.com/v1/"
        );
        for bad in [
            "ftp://example.com",
            "https://u:p@example.com",
            "https://example.com/#f",
            "https://example.com/?a=b",
            "not a url",
            "",
            "http://",
        ] {
            assert!(checked_base_url(bad).is_err(), "{bad}");
        }
        assert_eq!(checked_env_key(" _AB ").unwrap(), "_AB");
        assert_eq!(checked_env_key("lower_key").unwrap(), "lower_key");
        for bad in ["1ABC", "A-B", ""] {
            assert!(checked_env_key(bad).is_err(), "{bad}");
        }
    }
}
