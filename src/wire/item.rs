//! Response items: what the model produces (`output_item.added` / `.done`) and what we send back
//! as `input` history. Unknown item types are kept verbatim as raw JSON so that replaying history
//! never drops something the provider gave us.
//!
//! Every `id` here is the provider's, exactly as it issued it, or absent. Ids a consumer makes
//! up for its own bookkeeping live outside these items: the items are sent back upstream as
//! history, and a provider rejects ids it did not issue (with `store: false` it kept nothing to
//! match them against, and it checks each id's prefix against the item type).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One item of a Responses conversation, as it appears in `output` and in `input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    Message {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        role: String,
        #[serde(default)]
        content: Vec<ContentItem>,
        /// `commentary` / `final_answer` on models that label their messages.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
    },
    Reasoning {
        /// Empty when the provider sent none; then no `id` is sent back either.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        id: String,
        #[serde(default)]
        summary: Vec<ReasoningSummary>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ReasoningContent>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    FunctionCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        call_id: String,
        name: String,
        /// The tool namespace the function belongs to (e.g. `mcp__docs` for an MCP server's
        /// tools), echoed back in history exactly as the model gave it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        #[serde(default)]
        arguments: String,
    },
    FunctionCallOutput {
        call_id: String,
        output: FunctionCallOutputBody,
    },
    CustomToolCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        call_id: String,
        name: String,
        #[serde(default)]
        input: String,
    },
    CustomToolCallOutput {
        call_id: String,
        output: String,
    },
    WebSearchCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<Value>,
    },
    /// Any item type this build does not model; replayed to the provider exactly as received.
    /// Only objects whose `type` is a string naming none of the variants above land here, so a
    /// known item with missing fields fails to parse instead of hiding as "unknown".
    #[serde(untagged, deserialize_with = "unknown_item")]
    Other(Value),
}

/// The `type` values the tagged variants of [`ResponseItem`] claim.
const KNOWN_ITEM_TYPES: [&str; 7] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "web_search_call",
];

fn unknown_item<'de, D>(deserializer: D) -> Result<Value, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error;
    let value = Value::deserialize(deserializer)?;
    match value.get("type").and_then(Value::as_str) {
        Some(kind) if KNOWN_ITEM_TYPES.contains(&kind) => Err(D::Error::custom(format!(
            "`{kind}` item is missing required fields"
        ))),
        Some(_) => Ok(value),
        None => Err(D::Error::custom("an item needs a string `type`")),
    }
}

/// What a function call answered: text, or content parts (an image the model asked to see).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FunctionCallOutputBody {
    Text(String),
    Content(Vec<ContentItem>),
}

impl FunctionCallOutputBody {
    /// The text parts, joined (empty for an answer of images only).
    pub fn text(&self) -> String {
        match self {
            FunctionCallOutputBody::Text(text) => text.clone(),
            FunctionCallOutputBody::Content(parts) => parts
                .iter()
                .filter_map(|part| match part {
                    ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                        Some(text.as_str())
                    }
                    _ => None,
                })
                .collect(),
        }
    }
}

impl From<String> for FunctionCallOutputBody {
    fn from(text: String) -> Self {
        FunctionCallOutputBody::Text(text)
    }
}

impl From<&str> for FunctionCallOutputBody {
    fn from(text: &str) -> Self {
        FunctionCallOutputBody::Text(text.to_string())
    }
}

/// A part of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    InputText {
        text: String,
    },
    InputImage {
        image_url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    OutputText {
        text: String,
    },
    #[serde(untagged)]
    Other(Value),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningSummary {
    SummaryText { text: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningContent {
    ReasoningText { text: String },
    Text { text: String },
}

impl ResponseItem {
    /// A user message carrying plain text, the shape every turn's input starts with.
    pub fn user_text(text: impl Into<String>) -> ResponseItem {
        ResponseItem::Message {
            id: None,
            role: "user".to_string(),
            content: vec![ContentItem::InputText { text: text.into() }],
            phase: None,
        }
    }

    /// The provider-assigned id, when the item has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            ResponseItem::Message { id, .. }
            | ResponseItem::FunctionCall { id, .. }
            | ResponseItem::CustomToolCall { id, .. }
            | ResponseItem::WebSearchCall { id, .. } => id.as_deref(),
            ResponseItem::Reasoning { id, .. } => Some(id.as_str()).filter(|id| !id.is_empty()),
            ResponseItem::Other(value) => value.get("id").and_then(Value::as_str),
            ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. } => {
                None
            }
        }
    }

    /// The concatenated visible text of an assistant message (`output_text` parts).
    pub fn message_text(&self) -> Option<String> {
        match self {
            ResponseItem::Message { content, .. } => Some(
                content
                    .iter()
                    .filter_map(|part| match part {
                        ContentItem::OutputText { text } | ContentItem::InputText { text } => {
                            Some(text.as_str())
                        }
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_item_types_round_trip_verbatim() {
        let raw = json!({"type": "image_generation_call", "id": "ig_1", "result": "abc"});
        let item: ResponseItem = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(item, ResponseItem::Other(raw.clone()));
        assert_eq!(serde_json::to_value(&item).ok(), Some(raw));
    }

    #[test]
    fn message_parses_and_serializes_without_null_ids() {
        let raw = json!({"type":"message","id":"msg_1","role":"assistant","status":"completed",
            "content":[{"type":"output_text","text":"Hi","annotations":[]}]});
        let item: ResponseItem = serde_json::from_value(raw).unwrap();
        assert_eq!(item.message_text().as_deref(), Some("Hi"));
        let user = serde_json::to_value(ResponseItem::user_text("yo")).ok();
        assert_eq!(
            user,
            Some(
                json!({"type":"message","role":"user","content":[{"type":"input_text","text":"yo"}]})
            )
        );
    }
}
