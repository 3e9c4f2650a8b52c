//! What the merged table's structured sections say beyond the typed view: `[models.<id>]`
//! (reasoning, apply_patch form, tool lists), `[tools]` switches and `web_search`, the
//! `apply_patch_tool_type`, and `[[skills.config]]`. Each source was checked by kind when it
//! was loaded, so these readers only pick out what is there.

use std::collections::BTreeMap;
use std::path::PathBuf;

use toml::{Table, Value};

use super::resolved::Config;
use crate::core::models::{
    ApplyPatchForm, ModelCatalog, ModelReasoning, DEFAULT_REASONING_SUMMARY,
};
use crate::core::tool_set::{ToolConfig, WebSearchMode};

/// What `[models.<id>]` tables say about reasoning: `supports_reasoning = false` marks a model
/// that does not reason; `supports_reasoning = true` or a `default_reasoning_summary` marks one
/// that does (`"none"` asks for no summary). A table naming neither leaves the model to the
/// built-in families. Each source was checked by kind when loaded, so a value of the wrong type
/// never gets here.
pub(super) fn model_catalog(table: &Table) -> ModelCatalog {
    let entries = table.get("models").and_then(Value::as_table);
    let mut configured = BTreeMap::new();
    for (id, spec) in entries.into_iter().flatten() {
        let supports = spec.get("supports_reasoning").and_then(Value::as_bool);
        let summary = spec
            .get("default_reasoning_summary")
            .and_then(Value::as_str);
        let reasoning = match (supports, summary) {
            (Some(false), _) => ModelReasoning::Unsupported,
            (None, None) => continue,
            (_, summary) => ModelReasoning::Supported {
                default_summary: match summary.unwrap_or(DEFAULT_REASONING_SUMMARY) {
                    "none" => None,
                    summary => Some(summary.to_string()),
                },
            },
        };
        configured.insert(id.clone(), reasoning);
    }
    let per_model = entries
        .into_iter()
        .flatten()
        .filter_map(|(id, spec)| Some((id.clone(), apply_patch_form(spec.as_table()?)?)))
        .collect();
    ModelCatalog::new(configured)
        .with_apply_patch_forms(apply_patch_form(table), per_model)
        .with_tool_config(tool_config(table))
}

/// `[tools]` switches (`name = bool` or `name.enabled = bool`), `[models.<id>] tools` lists and
/// the top-level `web_search` mode. The checker refused values of the wrong kind already.
fn tool_config(table: &Table) -> ToolConfig {
    let switches = table
        .get("tools")
        .and_then(Value::as_table)
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let enabled = match value {
                Value::Boolean(enabled) => Some(*enabled),
                Value::Table(options) => options.get("enabled").and_then(Value::as_bool),
                _ => None,
            }?;
            Some((name.clone(), enabled))
        })
        .collect();
    let per_model = table
        .get("models")
        .and_then(Value::as_table)
        .into_iter()
        .flatten()
        .filter_map(|(id, spec)| {
            let names = spec.get("tools")?.as_array()?;
            let names = names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_string))
                .collect();
            Some((id.clone(), names))
        })
        .collect();
    let web_search = match table.get("web_search").and_then(Value::as_str) {
        Some("disabled") => Some(WebSearchMode::Disabled),
        Some("cached") => Some(WebSearchMode::Cached),
        Some("live") => Some(WebSearchMode::Live),
        Some("indexed") => Some(WebSearchMode::Indexed),
        _ => None,
    };
    ToolConfig {
        switches,
        per_model,
        web_search,
        ..ToolConfig::default()
    }
}

/// `apply_patch_tool_type` in `table` (top level or a `[models.<id>]` table): `"freeform"` (a
/// custom tool with a grammar) or `"function"` (a JSON function tool). The checker refused any
/// other value already.
fn apply_patch_form(table: &Table) -> Option<ApplyPatchForm> {
    match table.get("apply_patch_tool_type").and_then(Value::as_str) {
        Some("freeform") => Some(ApplyPatchForm::Freeform),
        Some("function") => Some(ApplyPatchForm::Function),
        _ => None,
    }
}

impl Config {
    /// `[[skills.config]]` entries (`name` or `path`, and `enabled`), in order. Entries naming
    /// neither, or without a boolean `enabled`, are skipped with a warning.
    pub fn skill_toggles(&self) -> Vec<crate::core::skills::SkillToggle> {
        let entries = self
            .table
            .get("skills")
            .and_then(|skills| skills.get("config"))
            .and_then(Value::as_array);
        let mut toggles = Vec::new();
        for entry in entries.into_iter().flatten() {
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string);
            let path = entry.get("path").and_then(Value::as_str).map(PathBuf::from);
            match (entry.get("enabled").and_then(Value::as_bool), &name, &path) {
                (Some(enabled), Some(_), _) | (Some(enabled), _, Some(_)) => {
                    toggles.push(crate::core::skills::SkillToggle {
                        name,
                        path,
                        enabled,
                    })
                }
                _ => tracing::warn!(
                    "ignoring a skills.config entry: it needs `name` or `path`, and `enabled`"
                ),
            }
        }
        toggles
    }
}
