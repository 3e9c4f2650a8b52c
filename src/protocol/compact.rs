//! `thread/compact/start`: compact a thread's history now, as a turn of its own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `thread/compact/start` params.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadCompactStartParams {
    pub thread_id: String,
}

/// `thread/compact/start` answers `{}` once the compaction turn is started; its progress comes
/// as `turn/started`, a `contextCompaction` item and `turn/completed`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ThreadCompactStartResponse {}
