//! The rollout line format. Core-level records (turn items) are stored as opaque JSON owned by
//! `core/`, so this layer does not depend on the domain's types.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::ResponseItem;

/// One line of a rollout file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutLine {
    /// RFC 3339 UTC time of the write.
    pub timestamp: String,
    #[serde(flatten)]
    pub item: RolloutItem,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "payload", rename_all = "snake_case")]
pub enum RolloutItem {
    /// Always the first line.
    SessionMeta(SessionMeta),
    /// A model-visible history item (what the next request's `input` is rebuilt from).
    ResponseItem(ResponseItem),
    TurnStarted {
        turn_id: String,
        started_at: i64,
    },
    /// A completed client-visible item of a turn, in core's own serialized form.
    TurnItem {
        turn_id: String,
        item: Value,
    },
    TurnEnded {
        turn_id: String,
        /// `completed`, `interrupted` or `failed`.
        status: String,
        #[serde(default)]
        error: Option<Value>,
        completed_at: i64,
    },
    ThreadName {
        name: String,
    },
    /// The thread's sticky settings changed (a `turn/start` override, a resume override): the
    /// full new snapshot, in core's own serialized form. The last one (else the session meta's)
    /// is what a resume restores.
    SettingsChanged {
        settings: Value,
    },
}

/// Facts about the thread fixed at creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// Unix seconds.
    pub created_at: i64,
    pub cwd: String,
    pub model: String,
    pub model_provider: String,
    #[serde(default)]
    pub originator: Option<String>,
    pub cli_version: String,
    #[serde(default)]
    pub forked_from_id: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    /// The thread's settings at creation (tools, instructions, policies), in core's own
    /// serialized form. Absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
}

impl RolloutLine {
    pub fn now(item: RolloutItem) -> RolloutLine {
        RolloutLine {
            timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            item,
        }
    }
}
