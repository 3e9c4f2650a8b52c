//! User input: what `turn/start` and `turn/steer` carry, and what a `userMessage` item echoes.
//! In a file of its own because both the turn methods and the items use it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One piece of user input. `text_elements` keeps its snake_case wire name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    Text {
        text: String,
        #[serde(default)]
        text_elements: Vec<Value>,
    },
    #[serde(rename_all = "camelCase")]
    Image {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_id: Option<String>,
        #[serde(default)]
        detail: Option<String>,
    },
    LocalImage {
        path: String,
        #[serde(default)]
        detail: Option<String>,
    },
    /// A skill to use: the server sends its `SKILL.md` (at `path`) to the model.
    Skill { name: String, path: String },
    /// A file or resource the text refers to (an `@` mention).
    Mention { name: String, path: String },
}
