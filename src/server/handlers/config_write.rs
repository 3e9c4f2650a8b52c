//! `config/value/write`, `config/batchWrite`, `skills/config/write`, `configRequirements/read`
//! and `hooks/list`. Every write goes through the one writer, `config::write`, which edits the
//! user's config.toml in place and replaces it atomically; this file only converts requests and
//! reports what the write left in effect (a `-c` flag on the same key overrides the file).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::config::write::{
    is_user_config, overridden_by_flags, version_of, write_user_config, ConfigEdit,
    ConfigWriteError, MergeStrategy,
};
use crate::protocol::config_write::{
    ConfigBatchWriteParams, ConfigLayerMetadata, ConfigRequirementsReadResponse,
    ConfigValueWriteParams, ConfigWriteResponse, HooksListEntry, HooksListParams,
    HooksListResponse, MergeStrategy as WireMergeStrategy, OverriddenMetadata, WriteStatus,
};
use crate::protocol::skills::{SkillsConfigWriteParams, SkillsConfigWriteResponse};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::config::{hides_all_values, is_secret, toml_to_json};

fn merge(strategy: WireMergeStrategy) -> MergeStrategy {
    match strategy {
        WireMergeStrategy::Replace => MergeStrategy::Replace,
        WireMergeStrategy::Upsert => MergeStrategy::Upsert,
    }
}

async fn config_value_write(
    context: &ServerContext,
    params: ConfigValueWriteParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let edit = ConfigEdit {
        key_path: params.key_path,
        value: params.value,
        merge: merge(params.merge_strategy),
    };
    write(
        context,
        vec![edit],
        params.file_path,
        params.expected_version,
    )
    .await
}

async fn config_batch_write(
    context: &ServerContext,
    params: ConfigBatchWriteParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let edits = params
        .edits
        .into_iter()
        .map(|edit| ConfigEdit {
            key_path: edit.key_path,
            value: edit.value,
            merge: merge(edit.merge_strategy),
        })
        .collect();
    write(context, edits, params.file_path, params.expected_version).await
}

/// Writes `edits` to the user's config.toml (refusing any other file) off the async threads,
/// and says whether a session flag overrides what was written.
pub(super) async fn write(
    context: &ServerContext,
    edits: Vec<ConfigEdit>,
    file_path: Option<String>,
    expected_version: Option<String>,
) -> Result<ConfigWriteResponse, HandlerError> {
    let home = context.config.home.clone();
    if let Some(file) = &file_path {
        if !is_user_config(&home, Path::new(file)) {
            return Err(ConfigWriteError::Readonly.into());
        }
    }
    let config = context.config.clone();
    let (outcome, edits) = tokio::task::spawn_blocking(move || {
        write_user_config(&config, &edits, expected_version.as_deref())
            .map(|outcome| (outcome, edits))
    })
    .await
    .map_err(|error| HandlerError::Internal(error.to_string()))??;
    let flags = &context.config.layers.session_flags;
    let overridden =
        overridden_by_flags(flags, &edits).map(|(key_path, value)| OverriddenMetadata {
            message: "Overridden by session flags".to_string(),
            overriding_layer: ConfigLayerMetadata {
                name: json!({"type": "sessionFlags"}),
                version: version_of(&toml::to_string(flags).unwrap_or_default()),
            },
            effective_value: shown_value(&key_path, &value),
        });
    Ok(ConfigWriteResponse {
        status: if overridden.is_some() {
            WriteStatus::OkOverridden
        } else {
            WriteStatus::Ok
        },
        version: outcome.version,
        file_path: outcome.path.display().to_string(),
        overridden_metadata: overridden,
    })
}

/// A flag's value as the client may see it: redacted under a secret-looking key, as
/// `config/read` shows it.
fn shown_value(key_path: &str, value: &toml::Value) -> Value {
    if key_path
        .split('.')
        .any(|part| is_secret(part) || hides_all_values(part))
    {
        return Value::String("<redacted>".to_string());
    }
    let mut wrapper = toml::Table::new();
    wrapper.insert("v".to_string(), value.clone());
    match toml_to_json(&toml::Value::Table(wrapper)) {
        Value::Object(mut map) => map.remove("v").unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// Turns one skill on or off: the matching `[[skills.config]]` entry is updated (or one is
/// added), and the file read back says whether the skill is now on.
async fn skills_config_write(
    context: &ServerContext,
    params: SkillsConfigWriteParams,
) -> Result<SkillsConfigWriteResponse, HandlerError> {
    let selector = match (params.name, params.path) {
        (Some(name), None) if !name.trim().is_empty() => ("name", name),
        (None, Some(path)) if Path::new(&path).is_absolute() => ("path", path),
        (None, Some(path)) => {
            return Err(HandlerError::InvalidParams(format!(
                "`path`: `{path}` is not an absolute path"
            )))
        }
        _ => {
            return Err(HandlerError::InvalidParams(
                "skills/config/write requires exactly one of path or name".to_string(),
            ))
        }
    };
    let fresh = context.config.reloaded()?;
    let mut entries: Vec<Value> = fresh
        .table
        .get("skills")
        .and_then(|skills| skills.get("config"))
        .and_then(toml::Value::as_array)
        .map(|entries| entries.iter().map(plain_json).collect())
        .unwrap_or_default();
    let (field, wanted) = &selector;
    let existing = entries
        .iter_mut()
        .rev()
        .find(|entry| entry.get(*field).and_then(Value::as_str) == Some(wanted.as_str()));
    match existing {
        Some(entry) => entry["enabled"] = Value::Bool(params.enabled),
        None => entries.push(json!({ *field: wanted, "enabled": params.enabled })),
    }
    let edit = ConfigEdit {
        key_path: "skills.config".to_string(),
        value: Value::Array(entries),
        merge: MergeStrategy::Replace,
    };
    write(context, vec![edit], None, None).await?;
    let written = context.config.reloaded()?;
    let effective_enabled = written
        .skill_toggles()
        .iter()
        .rev()
        .find(|toggle| match selector.0 {
            "name" => toggle.name.as_deref() == Some(selector.1.as_str()),
            _ => toggle.path.as_deref() == Some(PathBuf::from(&selector.1).as_path()),
        })
        .is_none_or(|toggle| toggle.enabled);
    Ok(SkillsConfigWriteResponse { effective_enabled })
}

/// A TOML value as JSON, unredacted: it is only written back to the file it came from.
fn plain_json(value: &toml::Value) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// No managed requirements exist for openturn (no requirements.toml, no MDM): `null`, as the
/// reference reports when none are configured.
fn config_requirements_read(
    _context: &ServerContext,
) -> Result<ConfigRequirementsReadResponse, HandlerError> {
    Ok(ConfigRequirementsReadResponse {
        supports_independent_speed_modes: Some(true),
        requirements: None,
    })
}

/// openturn runs no lifecycle hooks, so every directory lists none; a `[hooks]` table in the
/// user's config is reported as a warning, since the user expects it to do something.
fn hooks_list(
    context: &ServerContext,
    params: HooksListParams,
) -> Result<HooksListResponse, HandlerError> {
    let mut cwds = params.cwds;
    if cwds.is_empty() {
        cwds.push(
            std::env::current_dir()
                .map_err(|error| HandlerError::Internal(error.to_string()))?
                .display()
                .to_string(),
        );
    }
    let fresh = context.config.reloaded()?;
    let warnings: Vec<String> = fresh
        .layers
        .user_table
        .get("hooks")
        .map(|_| {
            format!(
                "the [hooks] table in {} is ignored: openturn runs no hooks",
                fresh.layers.user_file.display()
            )
        })
        .into_iter()
        .collect();
    Ok(HooksListResponse {
        data: cwds
            .into_iter()
            .map(|cwd| HooksListEntry {
                cwd,
                hooks: Vec::new(),
                warnings: warnings.clone(),
                errors: Vec::new(),
            })
            .collect(),
    })
}

handler!(ConfigValueWrite, |context, params| config_value_write(
    context, params
)
.await);
handler!(ConfigBatchWrite, |context, params| config_batch_write(
    context, params
)
.await);
handler!(SkillsConfigWrite, |context, params| skills_config_write(
    context, params
)
.await);
handler!(ConfigRequirementsRead, |context, _params| {
    config_requirements_read(context)
});
handler!(HooksList, |context, params| hooks_list(context, params));
