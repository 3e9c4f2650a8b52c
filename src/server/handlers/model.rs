//! `model/list`: the models a client may pick.
//!
//! First the configured `model` (always listed, and the default), then the `[models.<id>]`
//! tables of config.toml (keys: `display_name`, `description`, `hidden`,
//! `default_reasoning_effort`, `supported_reasoning_efforts`, `input_modalities`,
//! `model_provider`, `supports_reasoning`, `default_reasoning_summary`), then what the provider
//! offers: for OpenAI the catalogue openturn ships (`core/openai_models.rs`), for any other
//! provider the ids its own `GET {base_url}/models` lists (asked briefly and kept for a few
//! minutes; a provider that cannot say adds nothing). An id is listed once, its first place wins.
//!
//! A model the catalogue knows shows its efforts and description; a table's keys override them,
//! and a model given a table is shown unless the table hides it.
//! A model the catalogue says does not reason lists no reasoning efforts (and `none` as its
//! default), matching what its requests carry.

use crate::config::Config;
use crate::core::models::ModelReasoning;
use crate::core::openai_models::{effort_description, known_model, KnownModel, OPENAI_MODELS};
use crate::protocol::model::{Model, ModelListParams, ModelListResponse, ReasoningEffortOption};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The provider whose catalogue openturn ships.
const OPENAI_PROVIDER: &str = "openai";
/// Efforts offered for a reasoning model nothing else describes.
const DEFAULT_EFFORTS: &[&str] = &["low", "medium", "high"];

pub(crate) async fn model_list(
    context: &ServerContext,
    params: ModelListParams,
) -> Result<ModelListResponse, HandlerError> {
    let config = &context.config;
    let provider_id = params
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider_id.clone());
    let provider = config.provider(&provider_id).map_err(|_| {
        HandlerError::InvalidParams(format!(
            "`modelProvider`: no provider `{provider_id}` is configured"
        ))
    })?;
    let table = config.table.get("models").and_then(toml::Value::as_table);
    // (id, its `[models.<id>]` table, the provider that table names)
    let mut listed: Vec<(String, Option<&toml::Value>, Option<String>)> = Vec::new();
    if table.is_none_or(|t| !t.contains_key(&config.model)) {
        listed.push((config.model.clone(), None, None));
    }
    for (id, spec) in table.into_iter().flatten() {
        let provider = spec
            .get("model_provider")
            .and_then(toml::Value::as_str)
            .map(str::to_string);
        listed.push((id.clone(), Some(spec), provider));
    }
    let offered: Vec<String> = if provider_id == OPENAI_PROVIDER {
        OPENAI_MODELS.iter().map(|m| m.id.to_string()).collect()
    } else {
        context
            .threads
            .provider_model_ids(&provider)
            .await
            .unwrap_or_default()
    };
    for id in offered {
        if !listed.iter().any(|(known, _, _)| *known == id) {
            listed.push((id, None, None));
        }
    }
    let include_hidden = params.include_hidden.unwrap_or(false);
    let visible: Vec<Model> = listed
        .into_iter()
        .filter(
            |(_, _, provider)| match (&params.model_provider, provider) {
                (Some(wanted), Some(provider)) => wanted == provider,
                _ => true,
            },
        )
        .map(|(id, spec, _)| model_entry(&id, spec, id == config.model, config))
        .filter(|model| include_hidden || !model.hidden || model.is_default)
        .collect();
    let start = match params.cursor.as_deref() {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| HandlerError::InvalidRequest(format!("invalid cursor: {cursor}")))?,
        None => 0,
    };
    let limit = params
        .limit
        .map(|l| (l as usize).max(1))
        .unwrap_or(usize::MAX);
    let data: Vec<Model> = visible.iter().skip(start).take(limit).cloned().collect();
    let end = start + data.len();
    Ok(ModelListResponse {
        data,
        next_cursor: (end < visible.len()).then(|| end.to_string()),
    })
}

fn model_entry(id: &str, spec: Option<&toml::Value>, is_default: bool, config: &Config) -> Model {
    let known: Option<&KnownModel> = known_model(id);
    let reasons = config.model_catalog.reasoning(id) != ModelReasoning::Unsupported;
    let text = |key: &str| spec.and_then(|s| s.get(key)).and_then(toml::Value::as_str);
    let strings = |key: &str| -> Option<Vec<String>> {
        spec.and_then(|s| s.get(key))
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
    };
    let (efforts, default_effort) = if reasons {
        let known_efforts = known
            .filter(|known| !known.efforts.is_empty())
            .map(|known| (known.efforts, known.default_effort));
        let (fallback_efforts, fallback_default) =
            known_efforts.unwrap_or((DEFAULT_EFFORTS, "medium"));
        let efforts = strings("supported_reasoning_efforts")
            .unwrap_or_else(|| fallback_efforts.iter().map(|e| e.to_string()).collect());
        let default = text("default_reasoning_effort").unwrap_or(fallback_default);
        (efforts, default.to_string())
    } else {
        (Vec::new(), "none".to_string())
    };
    Model {
        id: id.to_string(),
        model: id.to_string(),
        display_name: text("display_name")
            .or(known.map(|known| known.display_name))
            .unwrap_or(id)
            .to_string(),
        description: text("description")
            .or(known.map(|known| known.description))
            .unwrap_or("")
            .to_string(),
        // A model the user configured is meant to be picked: only its own `hidden` hides it.
        hidden: match spec {
            Some(spec) => spec
                .get("hidden")
                .and_then(toml::Value::as_bool)
                .unwrap_or(false),
            None => known.is_some_and(|known| known.hidden),
        },
        is_default,
        default_reasoning_effort: default_effort,
        supported_reasoning_efforts: efforts
            .into_iter()
            .map(|effort| ReasoningEffortOption {
                description: effort_description(&effort),
                reasoning_effort: effort,
            })
            .collect(),
        input_modalities: strings("input_modalities")
            .unwrap_or_else(|| vec!["text".to_string(), "image".to_string()]),
        supports_personality: false,
        upgrade: None,
        upgrade_info: None,
        availability_nux: None,
        model_specialty: None,
        multi_agent_version: None,
        additional_speed_tiers: Vec::new(),
        service_tiers: Vec::new(),
        default_service_tier: None,
        available_access_programs: None,
    }
}

handler!(ModelList, |context, params| model_list(context, params)
    .await);
