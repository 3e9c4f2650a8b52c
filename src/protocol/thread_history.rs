//! Params and results of the history edits: `thread/revert` and `thread/inject_items` (`thread/reverted`
//! carries just the thread id).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
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
