//! `thread/goal/get`: a thread's long-running goal. openturn does not run goals, so every thread
//! reads as having none; the method exists so clients that ask (editor bridges) get an answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalGetParams {
    pub thread_id: String,
}

/// Always `{"goal": null}` for an existing thread.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadGoalGetResponse {
    pub goal: Option<serde_json::Value>,
}
