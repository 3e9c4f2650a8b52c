//! `ThreadItem`: the items of a turn as clients see them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::turn::UserInput;

/// An item plus the timing fields every item carries (written as `null` when unknown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItem {
    #[serde(flatten)]
    pub details: ThreadItemDetails,
    pub started_at_ms: Option<i64>,
    pub completed_at_ms: Option<i64>,
}

/// The item kinds of the core subset, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItemDetails {
    #[serde(rename_all = "camelCase")]
    UserMessage {
        id: String,
        content: Vec<UserInput>,
        client_id: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        id: String,
        text: String,
        /// `commentary`, `partial_answer` or `final_answer`.
        phase: Option<String>,
        moderation: Option<Value>,
        memory_citation: Option<Value>,
        delivery: Option<Value>,
        questions: Option<Value>,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        content: Vec<String>,
    },
}

impl ThreadItem {
    pub fn id(&self) -> &str {
        match &self.details {
            ThreadItemDetails::UserMessage { id, .. }
            | ThreadItemDetails::AgentMessage { id, .. }
            | ThreadItemDetails::Reasoning { id, .. } => id,
        }
    }
}
