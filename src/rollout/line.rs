//! The rollout line format. This layer sits below `core/` and does not know the domain's types:
//! the lines core owns (a turn's start, items and end, settings snapshots) keep typed here only
//! envelope fields (turn ids and times, which the index and forks use; the times of items and
//! a turn's duration, plain numbers a fork copies as they are), and hold core's content as
//! opaque payloads. Core builds and reads those lines through its own
//! typed records (`core::record`); nothing else should write or interpret their payloads.

use serde::de::{DeserializeSeed, Error as _, IntoDeserializer, MapAccess};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::wire::{ResponseItem, TokenUsage};

/// One line of a rollout file: `{"timestamp":…,"type":…,"payload":…}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
        /// When the item started and completed (Unix ms), as core stamped them. Absent in files
        /// written before they were recorded (readers fall back to the line's write time).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        started_at_ms: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        completed_at_ms: Option<i64>,
    },
    /// The end of a turn. `status`, `error` and `duration_ms` are core's record of how it
    /// ended, stored as core wrote them (its typed view reads them back).
    TurnEnded {
        turn_id: String,
        status: String,
        #[serde(default)]
        error: Option<Value>,
        completed_at: i64,
        /// How long the turn ran, in milliseconds, as `turn/completed` reported it. Absent in
        /// files written before it was recorded (readers fall back to the whole seconds).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<i64>,
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
    /// Token usage after one response: the thread's running total and that response's own.
    /// Resume restores the total from the last such line (files written before this line type
    /// existed simply resume with zero usage).
    TokenUsage {
        turn_id: String,
        total: TokenUsage,
        last: TokenUsage,
        #[serde(default)]
        model_context_window: Option<i64>,
    },
    /// A compaction replaced the model-visible history: from here on the history is exactly
    /// `replacement_history`, followed by the response items after this line. Written as one
    /// line (one write), so a compaction is either in the file whole or not at all.
    Compacted {
        /// The model's summary, as it wrote it.
        summary: String,
        replacement_history: Vec<ResponseItem>,
    },
    /// `thread/revert` dropped the turn `before_turn_id` and every turn after it: from here on
    /// the model-visible history is exactly `replacement_history` (what it was when that turn
    /// started), followed by the response items after this line, and readers drop those turns.
    /// One line (one write), so a revert is either in the file whole or not at all.
    HistoryReverted {
        before_turn_id: String,
        replacement_history: Vec<ResponseItem>,
    },
    /// The thread's stored metadata after a `thread/metadata/update`: the full new snapshot. The
    /// last one is what `thread/read` and `thread/list` report.
    ThreadMetadata(StoredThreadMetadata),
    /// The thread's goal after a change, in core's own serialized form; `null` once cleared.
    /// The last such line is the goal a resume (and `thread/goal/get` of a thread that is not
    /// loaded) reads.
    ThreadGoal {
        goal: Option<Value>,
    },
    /// Written right after the session meta of a thread a sub-agent tool spawned: who spawned
    /// it, how deep it is, and the nickname it answers to (the reference keeps these in its
    /// session meta's `source`; here the meta's `source` names the kind, `subAgentThreadSpawn`).
    SubAgentSpawn {
        parent_thread_id: String,
        depth: i32,
        #[serde(default)]
        agent_nickname: Option<String>,
    },
}

/// Metadata a client stores on a thread (`thread/metadata/update`); absent fields are unset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredThreadMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_origin_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_sha: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daybreak_enabled: Option<bool>,
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

/// Reading goes through the three keys instead of `#[serde(flatten)]`, which would first buffer
/// the whole line into serde's generic content and then parse the payload out of that buffer
/// (most of the cost of opening a long thread). Here the payload is kept as raw JSON and handed
/// to the tagged enum after its tag, so every byte is parsed once.
impl<'de> Deserialize<'de> for RolloutLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RolloutLine, D::Error> {
        #[derive(Deserialize)]
        struct OnDisk<'a> {
            timestamp: String,
            #[serde(rename = "type")]
            kind: String,
            #[serde(borrow)]
            payload: &'a RawValue,
        }
        let line = OnDisk::deserialize(deserializer)?;
        let tagged = TagThenPayload {
            kind: Some(line.kind),
            payload: Some(line.payload),
        };
        let item = RolloutItem::deserialize(serde::de::value::MapAccessDeserializer::new(tagged))
            .map_err(D::Error::custom)?;
        Ok(RolloutLine {
            timestamp: line.timestamp,
            item,
        })
    }
}

/// A two-entry map, `type` then `payload`, as [`RolloutItem`]'s adjacently tagged form reads it.
struct TagThenPayload<'a> {
    kind: Option<String>,
    payload: Option<&'a RawValue>,
}

impl<'de> MapAccess<'de> for TagThenPayload<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        let key = if self.kind.is_some() {
            "type"
        } else if self.payload.is_some() {
            "payload"
        } else {
            return Ok(None);
        };
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        if let Some(kind) = self.kind.take() {
            return seed.deserialize(kind.into_deserializer());
        }
        let payload = self
            .payload
            .take()
            .ok_or_else(|| serde_json::Error::custom("no value left"))?;
        let mut json = serde_json::Deserializer::from_str(payload.get());
        let value = seed.deserialize(&mut json)?;
        json.end()?;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RolloutLine, serde_json::Error> {
        serde_json::from_slice(text.as_bytes())
    }

    #[test]
    fn every_kind_of_line_reads_back_as_written() {
        let lines = [
            RolloutItem::TurnStarted {
                turn_id: "t1".into(),
                started_at: 7,
            },
            RolloutItem::TurnItem {
                turn_id: "t1".into(),
                item: serde_json::json!({"type": "agentMessage", "id": "m", "text": "hé \"q\""}),
                started_at_ms: Some(7_001),
                completed_at_ms: Some(7_250),
            },
            RolloutItem::TurnEnded {
                turn_id: "t1".into(),
                status: "failed".into(),
                error: Some(serde_json::json!({"message": "x"})),
                completed_at: 9,
                duration_ms: Some(1234),
            },
            RolloutItem::ThreadName { name: "n".into() },
        ];
        for item in lines {
            let line = RolloutLine {
                timestamp: "2026-11-30T12:00:00.000Z".into(),
                item,
            };
            let text = serde_json::to_string(&line).unwrap();
            assert_eq!(parse(&text).ok(), Some(line), "{text}");
        }
    }

    #[test]
    fn key_order_and_unknown_keys_do_not_matter_but_a_bad_payload_is_an_error() {
        let reordered =
            r#"{"payload":{"name":"n"},"extra":1,"type":"thread_name","timestamp":"ts"}"#;
        assert_eq!(
            parse(reordered).ok(),
            Some(RolloutLine {
                timestamp: "ts".into(),
                item: RolloutItem::ThreadName { name: "n".into() },
            })
        );
        assert!(parse(r#"{"timestamp":"ts","type":"thread_name","payload":{"nam":"n"}}"#).is_err());
        assert!(parse(r#"{"timestamp":"ts","type":"no_such_kind","payload":{}}"#).is_err());
        assert!(parse(r#"{"timestamp":"ts","type":"thread_name"}"#).is_err());
    }
}
