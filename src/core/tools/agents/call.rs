//! The calls of the `multi_agent_v1` tools as parsed from the model's arguments, with the
//! reference's parameter names. A leaf: `mod.rs` parses into these and `run.rs` runs them, and
//! neither reaches into the other for them.

use serde::Deserialize;

use super::super::super::ids::ItemId;

/// One input item of a task (`items`): the reference's loose shape; text items are what a
/// task is made of here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct InputItem {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub image_url: Option<String>,
    #[serde(default)]
    pub audio_url: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct SpawnArgs {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub items: Option<Vec<InputItem>>,
    #[serde(default)]
    pub fork_context: Option<bool>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub reasoning_effort: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct SendArgs {
    pub target: String,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub items: Option<Vec<InputItem>>,
    #[serde(default)]
    pub interrupt: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct WaitArgs {
    pub targets: Vec<String>,
    #[serde(default)]
    pub timeout_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct CloseArgs {
    pub target: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ResumeArgs {
    pub id: String,
}

/// A call of one of the tools, its arguments parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AgentCall {
    Spawn(SpawnArgs),
    Send(SendArgs),
    Wait(WaitArgs),
    Close(CloseArgs),
    Resume(ResumeArgs),
}

/// The task text of `message` or `items` (their text parts, one per line).
pub(crate) fn task_text(
    message: Option<&String>,
    items: Option<&Vec<InputItem>>,
) -> Result<String, String> {
    if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
        return Ok(message.clone());
    }
    let texts: Vec<&str> = items
        .into_iter()
        .flatten()
        .filter_map(|item| item.text.as_deref())
        .filter(|text| !text.trim().is_empty())
        .collect();
    if texts.is_empty() {
        return Err("provide the task as `message` (or text `items`)".to_string());
    }
    Ok(texts.join("\n"))
}

/// A call's id with its parsed call: what `tools::ToolCall` carries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RoutedAgentCall {
    pub call_id: ItemId,
    pub call: AgentCall,
}
