//! Building the next Responses request from the thread's settings and history.

use crate::wire::item::ContentItem;
use crate::wire::request::Reasoning;
use crate::wire::{ResponseItem, ResponsesRequest};

use super::super::models::ModelReasoning;
use super::super::settings::ThreadSettings;

/// The request for the next sampling step: the whole history as input.
pub(super) fn build_request(
    settings: &ThreadSettings,
    history: Vec<ResponseItem>,
    thread_id: &str,
    tools: Vec<serde_json::Value>,
    output_schema: Option<&serde_json::Value>,
    skills_instructions: Option<&str>,
) -> ResponsesRequest {
    let mut input = Vec::with_capacity(history.len() + 3);
    // The configured developer instructions, the skills on disk, then the collaboration mode's
    // instructions, each its own developer message (as the reference sends them), ahead of the
    // conversation.
    let mode_instructions = super::super::collaboration::mode_instructions(settings.plan_mode);
    for developer in [
        settings.developer_instructions.as_deref(),
        skills_instructions,
        mode_instructions.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        input.push(ResponseItem::Message {
            id: None,
            role: "developer".to_string(),
            content: vec![ContentItem::InputText {
                text: developer.to_string(),
            }],
            phase: None,
        });
    }
    input.extend(history);
    let reasoning = reasoning_field(settings);
    // Encrypted reasoning is what lets a stateless (`store: false`) thread replay its reasoning;
    // a model that does not reason rejects the request for it.
    let include = match reasoning {
        Some(_) => vec!["reasoning.encrypted_content".to_string()],
        None => Vec::new(),
    };
    ResponsesRequest {
        model: settings.model.clone(),
        instructions: settings.base_instructions.clone(),
        input,
        tools,
        tool_choice: "auto",
        parallel_tool_calls: true,
        reasoning,
        store: false,
        stream: true,
        include,
        prompt_cache_key: Some(thread_id.to_string()),
        text: output_schema.map(text_format),
        service_tier: None,
    }
}

/// `reasoning` for a model that reasons: the configured effort (none sent otherwise, leaving the
/// provider's default) and the configured summary, else the model's default; a summary of
/// `"none"` is left out. `None` for a model that does not reason.
fn reasoning_field(settings: &ThreadSettings) -> Option<Reasoning> {
    let default_summary = match settings.model_catalog.reasoning(&settings.model) {
        ModelReasoning::Unsupported => return None,
        ModelReasoning::Supported { default_summary } => default_summary,
    };
    let summary = settings
        .reasoning_summary
        .clone()
        .or(default_summary)
        .filter(|summary| summary != "none");
    Some(Reasoning {
        effort: settings.reasoning_effort.clone(),
        summary,
    })
}

/// The `text` control that makes the final message follow `schema` (docs/PROTOCOL.md §5.1).
fn text_format(schema: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "format": {
            "type": "json_schema",
            "strict": true,
            "name": "codex_output_schema",
            "schema": schema,
        }
    })
}
