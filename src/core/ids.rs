//! The ids core hands out and carries: [`ThreadId`], [`TurnId`] and [`ItemId`].
//!
//! Each is its own type so a turn id can never be passed where an item id is meant; none
//! converts into another. They serialize as the bare string, so the
//! rollout and the items core stores read exactly as they would with plain strings. Strings
//! become ids only at the edges: the server converting protocol params, core reading the
//! provider's items (whose call ids name tool items) and the rollout it resumes from.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The parts every id shares: the string it wraps, shown as is.
macro_rules! string_id {
    ($name:ident) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0.to_string()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

/// Ids that need no validation: any string the provider, the client or an older rollout used
/// is kept as it was given. They are shared strings (`Arc<str>`): every event of a turn carries
/// the turn's id and most carry an item's, so a clone must not copy the text (a text delta
/// would otherwise cost two allocations for its ids alone).
macro_rules! unchecked_string_id {
    ($name:ident) => {
        string_id!($name);

        impl From<String> for $name {
            fn from(raw: String) -> $name {
                $name(Arc::from(raw))
            }
        }

        impl From<&str> for $name {
            fn from(raw: &str) -> $name {
                $name(Arc::from(raw))
            }
        }

        // By hand rather than derived: serde serializes an `Arc` only with its `rc` feature,
        // and the stored form must stay the bare string either way.
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<$name, D::Error> {
                String::deserialize(deserializer).map($name::from)
            }
        }

        /// Matches a raw id as it arrives, e.g. the item a provider's delta names, without
        /// making an id of it first.
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }
    };
}

/// A thread id: a UUID (v7 for threads we create), kept as its canonical string. Only
/// [`ThreadId::new`] and [`ThreadId::parse`] make one, so every `ThreadId` is a valid UUID.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ThreadId(String);

string_id!(ThreadId);

impl ThreadId {
    pub fn new() -> ThreadId {
        ThreadId(uuid::Uuid::now_v7().to_string())
    }

    /// Validates a client-given (or rollout-stored) id.
    pub fn parse(raw: &str) -> Result<ThreadId, InvalidThreadId> {
        uuid::Uuid::parse_str(raw)
            .map(|uuid| ThreadId(uuid.to_string()))
            .map_err(|error| InvalidThreadId(error.to_string()))
    }
}

/// A string that is not a thread id (not a UUID), with the parser's reason. Its own type, not
/// a [`super::error::CoreError`], so this file imports nothing of core's: core's errors import
/// it (to convert), and the items the errors mention import these ids.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidThreadId(String);

impl Default for ThreadId {
    fn default() -> ThreadId {
        ThreadId::new()
    }
}

/// A turn id: a UUID v7 for turns this process starts; whatever a rollout recorded for turns
/// read back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TurnId(Arc<str>);

unchecked_string_id!(TurnId);

impl TurnId {
    #[expect(
        clippy::new_without_default,
        reason = "a default turn id would be a fresh random one; making one must be explicit"
    )]
    pub fn new() -> TurnId {
        TurnId::from(uuid::Uuid::now_v7().to_string())
    }
}

/// An item id: the provider's id for a streamed item, the call id of a tool call (a tool
/// item is named by its call), or one core made up for items it creates itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemId(Arc<str>);

unchecked_string_id!(ItemId);

impl ItemId {
    /// A fresh id (a UUID v7) for an item core creates: a user message, a compaction.
    #[expect(
        clippy::new_without_default,
        reason = "a default item id would be a fresh random one; making one must be explicit"
    )]
    pub fn new() -> ItemId {
        ItemId::from(uuid::Uuid::now_v7().to_string())
    }

    /// A fresh id for a streamed item the provider sent without one: `item_` and a simple
    /// UUID v7. The shape is fixed: older rollouts stored such ids in history, and the turn
    /// recognizes exactly this shape to drop them before replaying history to the provider.
    pub fn new_for_unnamed_output() -> ItemId {
        ItemId::from(format!("item_{}", uuid::Uuid::now_v7().simple()))
    }

    /// The plan item of a turn in plan mode: one per turn, `<turnId>-plan`.
    pub fn plan_of(turn_id: &TurnId) -> ItemId {
        ItemId::from(format!("{turn_id}-plan"))
    }
}
