//! Building the next Responses request from the thread's settings and history.

use crate::wire::item::ContentItem;
use crate::wire::request::Reasoning;
use crate::wire::{ResponseItem, ResponsesRequest};

use super::super::items::UserInput;
use super::super::settings::ThreadSettings;

/// The request for the next sampling step: the whole history as input.
pub(super) fn build_request(
    settings: &ThreadSettings,
    history: Vec<ResponseItem>,
    thread_id: &str,
    tools: Vec<serde_json::Value>,
    output_schema: Option<&serde_json::Value>,
) -> ResponsesRequest {
    let mut input = Vec::with_capacity(history.len() + 1);
    if let Some(developer) = settings.developer_instructions.as_deref() {
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
    let reasoning = if settings.reasoning_effort.is_some() || settings.reasoning_summary.is_some() {
        Some(Reasoning {
            effort: settings.reasoning_effort.clone(),
            summary: settings.reasoning_summary.clone(),
        })
    } else {
        None
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
        include: vec!["reasoning.encrypted_content".to_string()],
        prompt_cache_key: Some(thread_id.to_string()),
        text: output_schema.map(text_format),
    }
}

/// The `text` control that makes the final message follow `schema` (PROTOCOL.md §5.1).
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

/// The user's input as one `user` message item.
pub(crate) fn user_input_item(input: &[UserInput]) -> ResponseItem {
    let content = input
        .iter()
        .map(|part| match part {
            UserInput::Text { text } => ContentItem::InputText { text: text.clone() },
            UserInput::Image { url } => ContentItem::InputImage {
                image_url: url.clone(),
                detail: None,
            },
            UserInput::LocalImage { path } => ContentItem::InputText {
                text: format!("<image path=\"{path}\"> (local images are not attached yet)"),
            },
        })
        .collect();
    ResponseItem::Message {
        id: None,
        role: "user".to_string(),
        content,
        phase: None,
    }
}
