//! Core's rollout records, typed: how core writes a turn's start, items and end, and its
//! settings snapshots, and how anyone reading a rollout gets them back.
//!
//! The shape: `rollout/` stays generic. It sits below `core/` (it may only use `wire/`), so it
//! cannot name core's types; its lines keep typed only the envelope fields the storage layer
//! itself uses (a turn's id and times, for the thread index and for forks) and hold core's
//! content as opaque payloads (a stored item, a status word, an error, a settings snapshot).
//! This module is the typed view on top: every core-owned line is built here
//! ([`TurnEndRecord::to_rollout`], [`turn_started`], [`turn_item`], [`settings_changed`]) and
//! read back here ([`TurnRecord::read`]), so no other file writes a status as free text or pokes
//! at a stored payload's JSON. The reverse (rollout depending on core's types) would invert the
//! layers; a generic `RolloutItem<T>` would thread a type parameter through the writer, the
//! reader, the index and forks for no reader that needs it.
//!
//! The bytes on disk do not change: the records serialize to exactly the lines earlier versions
//! wrote, and lines older versions wrote (a turn end without `duration_ms`, an unknown status)
//! read as they always did.

use serde::{Deserialize, Serialize};

use crate::rollout::fork::TurnLines;
use crate::rollout::RolloutItem;

use super::error::TurnError;
use super::event::TurnOutcome;
use super::ids::TurnId;
use super::items::TurnItem;
use super::settings::PersistedSettings;

/// How a turn ended, as its end line records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndStatus {
    Completed,
    Interrupted,
    Failed,
}

impl TurnEndStatus {
    /// The word stored in the end line's `status`.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEndStatus::Completed => "completed",
            TurnEndStatus::Interrupted => "interrupted",
            TurnEndStatus::Failed => "failed",
        }
    }

    /// Reads a stored status. A word this version does not know reads as `interrupted`: the
    /// turn ended, and nothing says it completed.
    pub fn from_stored(word: &str) -> TurnEndStatus {
        match word {
            "completed" => TurnEndStatus::Completed,
            "failed" => TurnEndStatus::Failed,
            _ => TurnEndStatus::Interrupted,
        }
    }
}

impl From<&TurnOutcome> for TurnEndStatus {
    fn from(outcome: &TurnOutcome) -> TurnEndStatus {
        match outcome {
            TurnOutcome::Completed { .. } => TurnEndStatus::Completed,
            TurnOutcome::Interrupted => TurnEndStatus::Interrupted,
            TurnOutcome::Failed(_) => TurnEndStatus::Failed,
        }
    }
}

/// The end of one turn: what `turn/completed` reported, and what a rebuilt turn reports.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnEndRecord {
    pub turn_id: String,
    pub status: TurnEndStatus,
    /// Why the turn failed; only a failed turn has one.
    pub error: Option<TurnError>,
    /// Unix seconds.
    pub completed_at: i64,
    /// How long the turn ran, in milliseconds, measured on a monotonic clock. `None` only for
    /// lines written before it was recorded, and for turns a fork cut short.
    pub duration_ms: Option<i64>,
}

impl TurnEndRecord {
    /// The record of a turn that ended with `outcome`: the one the live turn reports and the one
    /// its end line stores are built by this same call.
    pub fn new(
        turn_id: impl Into<String>,
        outcome: &TurnOutcome,
        completed_at: i64,
        duration_ms: i64,
    ) -> TurnEndRecord {
        TurnEndRecord {
            turn_id: turn_id.into(),
            status: TurnEndStatus::from(outcome),
            error: match outcome {
                TurnOutcome::Failed(error) => Some(error.clone()),
                _ => None,
            },
            completed_at,
            duration_ms: Some(duration_ms),
        }
    }

    /// A copied turn that was still running in a fork's source: it ends where the copy does,
    /// interrupted, without a measured duration.
    pub fn cut_short(turn_id: impl Into<String>, completed_at: i64) -> TurnEndRecord {
        TurnEndRecord {
            turn_id: turn_id.into(),
            status: TurnEndStatus::Interrupted,
            error: None,
            completed_at,
            duration_ms: None,
        }
    }

    /// The end line.
    pub fn to_rollout(&self) -> RolloutItem {
        RolloutItem::TurnEnded {
            turn_id: self.turn_id.clone(),
            status: self.status.as_str().to_string(),
            error: self.error.as_ref().and_then(|error| {
                serde_json::to_value(error)
                    .inspect_err(|e| tracing::warn!(%e, "turn error not serializable"))
                    .ok()
            }),
            completed_at: self.completed_at,
            duration_ms: self.duration_ms,
        }
    }
}

/// Core's answers to a fork copying turn lines (see `rollout::fork`): a copied turn that had
/// not ended keeps its user messages and ends interrupted at `now` (Unix seconds).
pub struct ForkedTurnLines {
    pub now: i64,
}

impl TurnLines for ForkedTurnLines {
    fn is_user_input(&self, item: &serde_json::Value) -> bool {
        matches!(
            StoredTurnItem(item).decode(),
            Some(TurnItem::UserMessage { .. })
        )
    }

    fn cut_short_end(&self, turn_id: &str) -> RolloutItem {
        TurnEndRecord::cut_short(turn_id, self.now).to_rollout()
    }
}

/// One stored turn item, not yet decoded: decoding is most of the cost of rebuilding a turn, so
/// a reader decodes only the items it returns.
#[derive(Debug, Clone, Copy)]
pub struct StoredTurnItem<'a>(&'a serde_json::Value);

impl StoredTurnItem<'_> {
    /// The item; `None` (logged) for a kind this version does not know.
    pub fn decode(self) -> Option<TurnItem> {
        match TurnItem::deserialize(self.0) {
            Ok(item) => Some(item),
            Err(error) => {
                tracing::debug!(%error, "stored turn item of an unknown kind");
                None
            }
        }
    }
}

/// A turn's line, read back.
#[derive(Debug, Clone)]
pub enum TurnRecord<'a> {
    Started {
        turn_id: &'a str,
        /// Unix seconds.
        started_at: i64,
    },
    Item {
        turn_id: &'a str,
        item: StoredTurnItem<'a>,
        /// When the item started and completed; `None` for lines written before they were
        /// recorded (a reader falls back to the line's write time).
        times: Option<ItemTimes>,
    },
    Ended(TurnEndRecord),
}

/// When an item started and completed (Unix ms), as core stamped them once: the live item
/// events carry them and the item's line stores them, so an item reads the same live and
/// replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemTimes {
    pub started_at_ms: i64,
    pub completed_at_ms: i64,
}

impl<'a> TurnRecord<'a> {
    /// The turn record a rollout line holds; `None` for lines that are not about a turn's
    /// client-visible shape (history, names, usage, settings).
    pub fn read(line: &'a RolloutItem) -> Option<TurnRecord<'a>> {
        match line {
            RolloutItem::TurnStarted {
                turn_id,
                started_at,
            } => Some(TurnRecord::Started {
                turn_id,
                started_at: *started_at,
            }),
            RolloutItem::TurnItem {
                turn_id,
                item,
                started_at_ms,
                completed_at_ms,
            } => Some(TurnRecord::Item {
                turn_id,
                item: StoredTurnItem(item),
                // Core writes both or neither.
                times: match (started_at_ms, completed_at_ms) {
                    (Some(started), Some(completed)) => Some(ItemTimes {
                        started_at_ms: *started,
                        completed_at_ms: *completed,
                    }),
                    _ => None,
                },
            }),
            RolloutItem::TurnEnded {
                turn_id,
                status,
                error,
                completed_at,
                duration_ms,
            } => Some(TurnRecord::Ended(TurnEndRecord {
                turn_id: turn_id.clone(),
                status: TurnEndStatus::from_stored(status),
                // An error this version cannot read is dropped, not fatal: the status still
                // says the turn failed.
                error: error.as_ref().and_then(|value| {
                    TurnError::deserialize(value)
                        .inspect_err(|e| tracing::debug!(%e, "unreadable stored turn error"))
                        .ok()
                }),
                completed_at: *completed_at,
                duration_ms: *duration_ms,
            })),
            _ => None,
        }
    }
}

/// The line that opens a turn.
pub fn turn_started(turn_id: &TurnId, started_at: i64) -> RolloutItem {
    RolloutItem::TurnStarted {
        turn_id: turn_id.to_string(),
        started_at,
    }
}

/// The line recording a completed item of a turn and when it started and completed; `None`
/// (logged) if it cannot be serialized.
pub fn turn_item(turn_id: &TurnId, item: &TurnItem, times: ItemTimes) -> Option<RolloutItem> {
    match serde_json::to_value(item) {
        Ok(item) => Some(RolloutItem::TurnItem {
            turn_id: turn_id.to_string(),
            item,
            started_at_ms: Some(times.started_at_ms),
            completed_at_ms: Some(times.completed_at_ms),
        }),
        Err(error) => {
            tracing::warn!(%error, "turn item not serializable");
            None
        }
    }
}

/// The line recording the thread's new sticky settings.
pub fn settings_changed(settings: &PersistedSettings) -> RolloutItem {
    RolloutItem::SettingsChanged {
        settings: settings.to_value(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::TurnErrorKind;
    use crate::rollout::reader::parse_rollout;

    const META: &str = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"0","created_at":0,"cwd":"/","model":"m","model_provider":"p","cli_version":"0"}}"#;

    fn ends_of(text: &str) -> Vec<TurnEndRecord> {
        let contents = parse_rollout(std::path::Path::new("x"), text.as_bytes()).unwrap();
        contents
            .items
            .iter()
            .filter_map(|line| match TurnRecord::read(line) {
                Some(TurnRecord::Ended(end)) => Some(end),
                _ => None,
            })
            .collect()
    }

    /// Invariant: lines written by earlier versions read the same — the one before
    /// `duration_ms` was recorded, a failed turn's error as it was stored, a status word this
    /// version does not know — and an end line this version writes is byte-for-byte what
    /// earlier versions wrote for the same turn.
    #[test]
    fn old_end_lines_read_as_they_did_and_new_ones_are_written_the_same() {
        let old = [
            META,
            r#"{"timestamp":"t","type":"turn_ended","payload":{"turn_id":"a","status":"completed","error":null,"completed_at":12}}"#,
            r#"{"timestamp":"t","type":"turn_ended","payload":{"turn_id":"b","status":"failed","error":{"message":"boom","kind":{"http_connection_failed":{"status":401}},"details":"d"},"completed_at":13,"duration_ms":250}}"#,
            r#"{"timestamp":"t","type":"turn_ended","payload":{"turn_id":"c","status":"abandoned","completed_at":14}}"#,
        ]
        .join("\n");
        let ends = ends_of(&old);
        assert_eq!(
            ends,
            vec![
                TurnEndRecord {
                    turn_id: "a".into(),
                    status: TurnEndStatus::Completed,
                    error: None,
                    completed_at: 12,
                    duration_ms: None,
                },
                TurnEndRecord {
                    turn_id: "b".into(),
                    status: TurnEndStatus::Failed,
                    error: Some(TurnError {
                        message: "boom".into(),
                        kind: TurnErrorKind::HttpConnectionFailed { status: Some(401) },
                        details: Some("d".into()),
                    }),
                    completed_at: 13,
                    duration_ms: Some(250),
                },
                TurnEndRecord {
                    turn_id: "c".into(),
                    status: TurnEndStatus::Interrupted,
                    error: None,
                    completed_at: 14,
                    duration_ms: None,
                },
            ]
        );
        // What this version writes for turn b is what the earlier writer put on disk (it, too,
        // stored the error through a JSON value, whose keys come out sorted).
        let written = serde_json::to_string(&ends[1].to_rollout()).unwrap();
        assert_eq!(
            written,
            r#"{"type":"turn_ended","payload":{"turn_id":"b","status":"failed","error":{"details":"d","kind":{"http_connection_failed":{"status":401}},"message":"boom"},"completed_at":13,"duration_ms":250}}"#
        );
    }

    #[test]
    fn a_live_outcome_and_its_end_line_are_one_record() {
        let error = TurnError {
            message: "no".into(),
            kind: TurnErrorKind::Other,
            details: None,
        };
        let cases = [
            (
                TurnOutcome::Completed {
                    final_items: Vec::new(),
                },
                TurnEndStatus::Completed,
            ),
            (TurnOutcome::Interrupted, TurnEndStatus::Interrupted),
            (TurnOutcome::Failed(error.clone()), TurnEndStatus::Failed),
        ];
        for (outcome, status) in cases {
            let record = TurnEndRecord::new("t", &outcome, 5, 1234);
            assert_eq!(record.status, status);
            let line = record.to_rollout();
            let Some(TurnRecord::Ended(read)) = TurnRecord::read(&line) else {
                panic!("not an end line: {line:?}");
            };
            assert_eq!(read, record);
        }
    }

    #[test]
    fn a_fork_keeps_the_user_messages_of_a_turn_it_cuts_short_and_ends_it_interrupted() {
        let lines = ForkedTurnLines { now: 77 };
        let user = TurnItem::UserMessage {
            id: "u".into(),
            content: vec![crate::core::UserInput::Text { text: "hi".into() }],
            client_id: None,
        };
        let agent = TurnItem::AgentMessage {
            id: "m".into(),
            text: "partial".into(),
            phase: None,
            memory_citation: None,
        };
        assert!(lines.is_user_input(&serde_json::to_value(&user).unwrap()));
        assert!(!lines.is_user_input(&serde_json::to_value(&agent).unwrap()));
        let end = lines.cut_short_end("t");
        let Some(TurnRecord::Ended(end)) = TurnRecord::read(&end) else {
            panic!("not an end line: {end:?}");
        };
        assert_eq!(end, TurnEndRecord::cut_short("t", 77));
        assert_eq!(end.status, TurnEndStatus::Interrupted);
    }

    #[test]
    fn a_stored_item_decodes_and_an_unknown_kind_is_skipped() {
        let item = TurnItem::AgentMessage {
            id: "m".into(),
            text: "hi".into(),
            phase: None,
            memory_citation: None,
        };
        let times = ItemTimes {
            started_at_ms: 1_000,
            completed_at_ms: 1_250,
        };
        let line = turn_item(&TurnId::from("t"), &item, times).unwrap();
        let Some(TurnRecord::Item {
            turn_id,
            item: stored,
            times: stored_times,
        }) = TurnRecord::read(&line)
        else {
            panic!("not an item line: {line:?}");
        };
        assert_eq!(turn_id, "t");
        assert_eq!(stored.decode(), Some(item));
        assert_eq!(stored_times, Some(times));
        let unknown = RolloutItem::TurnItem {
            turn_id: "t".into(),
            item: serde_json::json!({"type": "from_a_later_version"}),
            started_at_ms: None,
            completed_at_ms: None,
        };
        let Some(TurnRecord::Item { item: stored, .. }) = TurnRecord::read(&unknown) else {
            panic!("not an item line");
        };
        assert_eq!(stored.decode(), None);
    }

    /// Invariant: an item line stores the start and completion times core stamped live, and
    /// reads them back from its bytes; an item line written before they were stored reads
    /// without times (its reader falls back to the line's write time), and the line this
    /// version writes is the earlier line plus the two times.
    #[test]
    fn item_lines_store_their_times_and_old_item_lines_read_without_them() {
        let old = [
            META,
            r#"{"timestamp":"t","type":"turn_item","payload":{"turn_id":"a","item":{"id":"m","phase":null,"text":"hi","type":"agent_message"}}}"#,
            r#"{"timestamp":"t","type":"turn_item","payload":{"turn_id":"a","item":{"id":"m","phase":null,"text":"hi","type":"agent_message"},"started_at_ms":1764550000123,"completed_at_ms":1764550000456}}"#,
        ]
        .join("\n");
        let contents = parse_rollout(std::path::Path::new("x"), old.as_bytes()).unwrap();
        let times: Vec<Option<ItemTimes>> = contents
            .items
            .iter()
            .filter_map(|line| match TurnRecord::read(line) {
                Some(TurnRecord::Item { times, .. }) => Some(times),
                _ => None,
            })
            .collect();
        let stamped = ItemTimes {
            started_at_ms: 1_764_550_000_123,
            completed_at_ms: 1_764_550_000_456,
        };
        assert_eq!(times, vec![None, Some(stamped)]);

        let item = TurnItem::AgentMessage {
            id: "m".into(),
            text: "hi".into(),
            phase: None,
            memory_citation: None,
        };
        // Stored through a JSON value, as earlier versions stored it: its keys come out sorted.
        let written =
            serde_json::to_string(&turn_item(&TurnId::from("a"), &item, stamped).unwrap()).unwrap();
        assert_eq!(
            written,
            r#"{"type":"turn_item","payload":{"turn_id":"a","item":{"id":"m","phase":null,"text":"hi","type":"agent_message"},"started_at_ms":1764550000123,"completed_at_ms":1764550000456}}"#
        );
    }
}
