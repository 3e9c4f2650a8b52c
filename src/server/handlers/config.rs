//! `config/read`: what configuration says.
//!
//! `config/read` reports each leaf key's origin (the user's config.toml or the `-c` session
//! flags, whichever set it last) with a `sha256:` version of what that layer was read from, and
//! on `includeLayers` the layers themselves, user file first. Secret-looking keys are redacted
//! everywhere. The user file is read again when it changed since start-up (a `config/*/write`),
//! so a version read here is the one a write compares `expectedVersion` with.
//!
//! Configuration accepted but not acted on as written reaches the client as `configWarning`:
//! the daemon's own after `initialize`, a request's `config` object's with that request.

use serde_json::{json, Map, Value};

use crate::config::{ConfigLayers, ConfigWarning};
use crate::protocol::config::{ConfigReadParams, ConfigReadResponse};
use crate::protocol::notification::{ConfigWarningNotification, ServerNotification};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;

/// One `configWarning` notification per warning, in the order they were found.
pub(crate) fn config_warnings(warnings: &[ConfigWarning]) -> Vec<ServerNotification> {
    warnings
        .iter()
        .map(|warning| {
            ServerNotification::ConfigWarning(ConfigWarningNotification {
                summary: warning.summary.clone(),
                details: None,
                path: warning.path.as_ref().map(|path| path.display().to_string()),
            })
        })
        .collect()
}

/// Key names whose values never leave the daemon: anything named like a key, token, secret,
/// password, credential, cookie or authorization (`api_key`, `x-api-key`, `api_key_header`).
/// `env_key` names an environment variable, not its value, so it stays visible.
pub(super) fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if key == "env_key" {
        return false;
    }
    let named_key = key
        .split(['_', '-', '.'])
        .any(|part| part == "key" || part == "apikey");
    named_key
        || [
            "token",
            "secret",
            "password",
            "credential",
            "cookie",
            "authoriz",
        ]
        .iter()
        .any(|word| key.contains(word))
}

/// Tables whose every value is hidden, whatever the header is called: headers commonly carry
/// credentials under arbitrary names.
pub(super) fn hides_all_values(key: &str) -> bool {
    // `env` tables of MCP servers hand their values to child processes: often credentials.
    key == "http_headers" || key == "env_http_headers" || key == "env"
}

/// The value shown in place of a secret.
fn redacted() -> Value {
    Value::String("<redacted>".to_string())
}

/// `value` with every leaf replaced by the redaction marker, keeping its shape (the header
/// names stay visible).
fn redact_leaves(value: &toml::Value) -> Value {
    match value {
        toml::Value::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.clone(), redact_leaves(v)))
                .collect(),
        ),
        toml::Value::Array(items) => Value::Array(items.iter().map(redact_leaves).collect()),
        _ => redacted(),
    }
}

pub(crate) fn config_read(
    context: &ServerContext,
    params: ConfigReadParams,
) -> Result<ConfigReadResponse, HandlerError> {
    // The file as it is now: a write since start-up shows, with its new version.
    let config = &context.config.reloaded()?;
    let mut map = match toml_to_json(&toml::Value::Table(config.table.clone())) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    // The effective values, also when they came from defaults.
    map.insert("model".into(), Value::String(config.model.clone()));
    map.insert(
        "model_provider".into(),
        Value::String(config.model_provider_id.clone()),
    );
    map.insert(
        "approval_policy".into(),
        serde_json::to_value(convert::approval_policy_out(config.approval_policy))
            .unwrap_or(Value::Null),
    );
    map.insert(
        "sandbox_mode".into(),
        serde_json::to_value(config.sandbox_mode).unwrap_or(Value::Null),
    );
    // Not the configured value (`auto` by default) but the mode confined commands run in:
    // `namespaces`, `fallback`, or `unavailable` when namespaces are required and missing.
    map.insert(
        "sandbox_isolation".into(),
        Value::String(
            crate::core::sandboxing::isolation_mode_name(config.sandbox_isolation).to_string(),
        ),
    );
    let layers = config_layers(&config.layers);
    // Later layers win, so a key's origin is the last layer that sets it.
    let mut origins = Map::new();
    for layer in &layers {
        let metadata = json!({"name": layer.name, "version": layer.version});
        for key in dotted_keys(layer.table) {
            origins.insert(key, metadata.clone());
        }
    }
    Ok(ConfigReadResponse {
        config: map,
        origins,
        layers: params.include_layers.then(|| {
            layers
                .iter()
                .map(|layer| {
                    json!({
                        "name": layer.name,
                        "version": layer.version,
                        "config": toml_to_json(&toml::Value::Table(layer.table.clone())),
                    })
                })
                .collect()
        }),
    })
}

/// One source of configuration as `config/read` reports it.
struct Layer<'a> {
    name: Value,
    /// `sha256:<hex>` of what the layer was read from.
    version: String,
    table: &'a toml::Table,
}

/// The user file (when it exists), then the `-c` flags (when any), lowest precedence first.
fn config_layers(layers: &ConfigLayers) -> Vec<Layer<'_>> {
    let mut out = Vec::new();
    if let Some(text) = &layers.user_text {
        out.push(Layer {
            name: json!({
                "type": "user",
                "file": layers.user_file.display().to_string(),
                "profile": null,
            }),
            version: crate::config::write::version_of(text),
            table: &layers.user_table,
        });
    }
    if !layers.session_flags.is_empty() {
        // Flags have no file: the version is the hash of their canonical TOML form.
        let text = toml::to_string(&layers.session_flags).unwrap_or_default();
        out.push(Layer {
            name: json!({"type": "sessionFlags"}),
            version: crate::config::write::version_of(&text),
            table: &layers.session_flags,
        });
    }
    out
}

/// The dotted path of every leaf value of a table (arrays are leaves).
fn dotted_keys(table: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    // Bounded by the table's (finite) nesting.
    let mut stack: Vec<(String, &toml::Table)> = vec![(String::new(), table)];
    while let Some((prefix, table)) = stack.pop() {
        for (key, value) in table {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            match value {
                toml::Value::Table(inner) => stack.push((path, inner)),
                _ => out.push(path),
            }
        }
    }
    out
}

pub(super) fn toml_to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| {
                    let value = if hides_all_values(k) {
                        redact_leaves(v)
                    } else if is_secret(k) {
                        redacted()
                    } else {
                        toml_to_json(v)
                    };
                    (k.clone(), value)
                })
                .collect(),
        ),
    }
}

handler!(ConfigRead, |context, params| {
    // The sandbox's mode is part of the answer: wait for the startup check off this thread.
    crate::core::sandboxing::isolation_decided().await;
    config_read(context, params)
});
