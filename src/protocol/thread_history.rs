//! Params and results of the history edits: `thread/revert` and `thread/inject_items` (`thread/reverted`
//! carries just the thread id).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::thread::Thread;

/// `thread/revert`: drop `beforeTurnId` and every later turn from the thread's history. Local
/// file changes those turns made stay as they are.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertParams {
    pub thread_id: String,
    /// The first turn dropped; every later turn goes with it.
    pub before_turn_id: String,
}

/// The thread after the revert (`turns` empty: page the kept turns with `thread/turns/list`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertResponse {
    pub thread: Thread,
    /// The newest kept turn, as a `thread/turns/list` cursor (`sortDirection: "desc"`); none
    /// when no turn is left.
    pub turns_backwards_cursor: Option<String>,
    pub items_backwards_cursor: Option<String>,
}

/// `thread/inject_items`: raw Responses API items appended to the thread's model-visible
/// history. openturn checks each one and refuses the call naming the first malformed item.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInjectItemsParams {
    pub thread_id: String,
    pub items: Vec<Value>,
}

/// `thread/metadata/update`: patches what a client stores on a persisted thread. At least one
/// field must be given.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMetadataUpdateParams {
    pub thread_id: String,
    #[serde(default)]
    pub git_info: Option<ThreadMetadataGitInfoUpdateParams>,
    /// Empty clears the project; any other id must name an existing project.
    #[serde(default)]
    pub project_id: Option<String>,
    #[serde(default)]
    pub daybreak_enabled: Option<bool>,
}

/// Each field: absent leaves it, `null` clears it, a non-empty string replaces it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMetadataGitInfoUpdateParams {
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>")]
    pub branch: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>")]
    pub origin_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>")]
    pub sha: Option<Option<String>>,
}

/// A field that is present (even as `null`) reads as `Some(value)`; `#[serde(default)]` makes
/// an absent one `None`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}
