//! `collaborationMode/list` (experimental): the collaboration modes a client may offer its
//! user, each with what selecting it applies. Field names are snake_case inside a mask, as
//! the reference spells them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::thread_settings::ModeKind;

/// Takes no params: absent, `null` or `{}` (other fields are ignored, as by the reference).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeListParams {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeListResponse {
    pub data: Vec<CollaborationModeMask>,
}

/// One preset: a client that selects it sends `collaborationMode` with this `mode`, and with
/// `model` and `reasoning_effort` where they are not `null` (`null` keeps the thread's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeMask {
    pub name: String,
    pub mode: Option<ModeKind>,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
}
