//! Client-visible items of a turn, in the domain's terms. The server converts them to protocol
//! `ThreadItem`s; the rollout stores them (serialized by serde here) to rebuild turns on resume.

use serde::{Deserialize, Serialize};

/// One piece of user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserInput {
    Text { text: String },
    Image { url: String },
    LocalImage { path: String },
}

/// A completed (or starting) item of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnItem {
    UserMessage {
        id: String,
        content: Vec<UserInput>,
        #[serde(default)]
        client_id: Option<String>,
    },
    AgentMessage {
        id: String,
        text: String,
        #[serde(default)]
        phase: Option<String>,
    },
    Reasoning {
        id: String,
        #[serde(default)]
        summary: Vec<String>,
        #[serde(default)]
        content: Vec<String>,
    },
}

impl TurnItem {
    pub fn id(&self) -> &str {
        match self {
            TurnItem::UserMessage { id, .. }
            | TurnItem::AgentMessage { id, .. }
            | TurnItem::Reasoning { id, .. } => id,
        }
    }
}
