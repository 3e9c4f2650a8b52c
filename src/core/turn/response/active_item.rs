//! The item that currently receives deltas, and the custom-tool input stream.
//!
//! Invariants (docs/ARCHITECTURE.md §6): `output_item.added` opens streaming state for at most one item at a time; a text
//! or reasoning delta belongs to the active item or is a protocol error — never attached to a
//! guessed item (a text delta naming an item that is not the open one is an orphan: warned about
//! and dropped); `output_item.done` closes it. Items the provider sent
//! without an id get one here for the client, before anything is emitted, and keep it through
//! deltas, done and the stored turn items; history keeps only the provider's ids. Tool-call
//! items never become the active item: their argument deltas go to a [`ToolInputStream`],
//! matched by call id.

use crate::core::items::FileChangeEntry;
use crate::core::tools::apply_patch::{self, preview::PatchPreview};
use crate::wire::ResponseItem;

use super::super::super::ids::ItemId;
use crate::core::text::AssistantTextParser;

/// A provider event that breaks the stream's ownership rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProtocolError {
    #[error("output_item.added for {new} while {open} is still active")]
    OverlappingItems { open: String, new: String },
    #[error("{event} without an active item")]
    NoActiveItem { event: &'static str },
    #[error("{event} for {named}, which is not the active item {open}; dropped")]
    OrphanDelta {
        event: &'static str,
        named: String,
        open: String,
    },
    #[error("{event} while the active item {item} is not a {expected}")]
    WrongItemKind {
        event: &'static str,
        item: String,
        expected: &'static str,
    },
}

/// Logs a protocol error and returns the warning text for the client. Test builds run the same
/// code as the shipped binary; tests that must not see an illegal sequence assert that no
/// warning was emitted.
pub(crate) fn report_protocol_error(error: &ProtocolError) -> String {
    tracing::error!(%error, "provider stream protocol error");
    format!("protocol error in the model's response stream: {error}")
}

/// What kind of item is streaming, with its per-kind state.
#[derive(Debug)]
pub(crate) enum ActiveKind {
    AgentMessage {
        phase: Option<String>,
        /// Boxed: the parser holds two scanners, and the enum moves often.
        parser: Box<AssistantTextParser>,
        /// Plan mode defers `item/started` until visible text exists.
        started: bool,
        /// Plan mode: whitespace seen before the start, sent with the first visible text.
        held_whitespace: String,
    },
    Reasoning,
}

#[derive(Debug)]
pub(crate) struct ActiveItem {
    /// The id every event for this item carries (the provider's, or one we assigned).
    pub id: ItemId,
    /// The id the provider used, which `reasoning_summary_text.done` refers to.
    pub provider_id: Option<String>,
    pub kind: ActiveKind,
}

/// At most one active item.
#[derive(Debug, Default)]
pub(crate) struct ActiveItemSlot {
    item: Option<ActiveItem>,
}

impl ActiveItemSlot {
    /// Opens `item`. An item still open is abandoned (never committed from its deltas; its
    /// done event, if it comes, commits it as a complete item) and the overlap reported.
    pub(crate) fn open(&mut self, item: ActiveItem) -> Result<(), ProtocolError> {
        let new = item.id.clone();
        match self.item.replace(item) {
            None => Ok(()),
            Some(previous) => Err(ProtocolError::OverlappingItems {
                open: previous.id.into_string(),
                new: new.into_string(),
            }),
        }
    }

    pub(crate) fn take(&mut self) -> Option<ActiveItem> {
        self.item.take()
    }

    #[cfg(test)]
    pub(crate) fn get(&self) -> Option<&ActiveItem> {
        self.item.as_ref()
    }

    pub(crate) fn get_mut(&mut self) -> Option<&mut ActiveItem> {
        self.item.as_mut()
    }

    /// The active agent message, for a text delta naming `item_id`. A delta goes to the item it
    /// names: one naming another item is an orphan, never appended to the active one (the
    /// completed item would lack text the client was streamed). An empty id names nothing and
    /// goes to the active item, as does any id when the provider gave the active item none (its
    /// deltas cannot name it by an id it never sent).
    pub(crate) fn message_for_delta(
        &mut self,
        item_id: &str,
    ) -> Result<&mut ActiveItem, ProtocolError> {
        const EVENT: &str = "output_text.delta";
        if let Some(open) = self.item.as_ref() {
            let names_other = !item_id.is_empty()
                && open
                    .provider_id
                    .as_deref()
                    .is_some_and(|provider_id| provider_id != item_id && open.id != item_id);
            if names_other {
                return Err(ProtocolError::OrphanDelta {
                    event: EVENT,
                    named: item_id.to_string(),
                    open: open.id.to_string(),
                });
            }
        }
        self.expect_kind(EVENT, "message", |kind| {
            matches!(kind, ActiveKind::AgentMessage { .. })
        })
    }

    /// The active reasoning item, for a reasoning delta named `event`.
    pub(crate) fn reasoning_for_delta(
        &mut self,
        event: &'static str,
    ) -> Result<&mut ActiveItem, ProtocolError> {
        self.expect_kind(event, "reasoning item", |kind| {
            matches!(kind, ActiveKind::Reasoning)
        })
    }

    fn expect_kind(
        &mut self,
        event: &'static str,
        expected: &'static str,
        is_kind: impl Fn(&ActiveKind) -> bool,
    ) -> Result<&mut ActiveItem, ProtocolError> {
        match self.item.as_mut() {
            None => Err(ProtocolError::NoActiveItem { event }),
            Some(item) if is_kind(&item.kind) => Ok(item),
            Some(item) => Err(ProtocolError::WrongItemKind {
                event,
                item: item.id.to_string(),
                expected,
            }),
        }
    }
}

/// The id the client sees for `item`: the provider's when it sent one, else the active item's
/// when that is the same item (same kind), else a fresh one; `None` for kinds that carry no id.
///
/// `item` is left as the provider sent it: an id made up here names the item for the client
/// only (events, turn items), never in history. History is sent back upstream, and a provider
/// rejects ids it did not issue (`store: false` keeps nothing to match them against, and ids
/// are checked against the item type's prefix).
pub(crate) fn client_item_id(item: &ResponseItem, active: Option<&ActiveItem>) -> Option<ItemId> {
    let carries_id = matches!(
        item,
        ResponseItem::Message { .. }
            | ResponseItem::FunctionCall { .. }
            | ResponseItem::CustomToolCall { .. }
            | ResponseItem::WebSearchCall { .. }
            | ResponseItem::Reasoning { .. }
    );
    if !carries_id {
        return None;
    }
    if let Some(provider_id) = item.id() {
        return Some(ItemId::from(provider_id));
    }
    let same_kind_active = active.filter(|active| {
        matches!(
            (item, &active.kind),
            (
                ResponseItem::Message { .. },
                ActiveKind::AgentMessage { .. }
            ) | (ResponseItem::Reasoning { .. }, ActiveKind::Reasoning)
        )
    });
    Some(
        same_kind_active
            .map(|active| active.id.clone())
            .unwrap_or_else(ItemId::new_for_unnamed_output),
    )
}

/// Drops an id that an earlier openturn wrote into history: before [`client_item_id`] kept
/// assigned ids out of history, rollouts stored them on the items, and replaying them would
/// make the provider reject every later request of the thread. Only the exact shape this crate
/// generated (`item_` and 32 lowercase hex digits) is dropped; provider ids never have it.
pub(crate) fn forget_legacy_assigned_id(mut item: ResponseItem) -> ResponseItem {
    let is_legacy = |id: &str| {
        id.strip_prefix("item_").is_some_and(|hex| {
            hex.len() == 32
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
    };
    match &mut item {
        ResponseItem::Message { id, .. }
        | ResponseItem::FunctionCall { id, .. }
        | ResponseItem::CustomToolCall { id, .. }
        | ResponseItem::WebSearchCall { id, .. }
            if id.as_deref().is_some_and(is_legacy) =>
        {
            *id = None;
        }
        ResponseItem::Reasoning { id, .. } if is_legacy(id) => id.clear(),
        _ => {}
    }
    item
}

/// The streamed input of the custom tool call being generated. Created when its item is added;
/// a delta naming another call is dropped (two calls' inputs must never be spliced together);
/// a function-call item replaces it with nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolInputStream {
    pub call_id: ItemId,
    pub tool: String,
    pub input: String,
    /// For `apply_patch` when the thread shows patches as they stream: the patch parsed so
    /// far, shown to the client as it grows.
    pub patch: Option<Box<PatchPreview>>,
}

impl ToolInputStream {
    /// The input stream of the call `call_id` to `tool`; `preview_patch` when an `apply_patch`
    /// input is shown while it streams.
    pub(crate) fn new(call_id: ItemId, tool: String, preview_patch: bool) -> ToolInputStream {
        ToolInputStream {
            call_id,
            patch: (preview_patch && tool == apply_patch::tool::TOOL_NAME).then(Box::default),
            tool,
            input: String::new(),
        }
    }

    /// Appends a delta (nothing when it names another call); for a patch, the preview's files
    /// when an update is due.
    pub(crate) fn consume(
        &mut self,
        call_id: Option<&str>,
        delta: &str,
    ) -> Option<Vec<FileChangeEntry>> {
        if call_id.is_some_and(|call_id| self.call_id != call_id) {
            tracing::debug!(active = %self.call_id, ?call_id, "tool input delta for another call dropped");
            return None;
        }
        self.input.push_str(delta);
        self.patch.as_mut()?.push(delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str) -> ActiveItem {
        ActiveItem {
            id: ItemId::from(id),
            provider_id: Some(id.to_string()),
            kind: ActiveKind::AgentMessage {
                phase: None,
                parser: Box::new(AssistantTextParser::new(false)),
                started: true,
                held_whitespace: String::new(),
            },
        }
    }

    #[test]
    fn a_delta_without_an_active_item_is_a_protocol_error() {
        let mut slot = ActiveItemSlot::default();
        assert_eq!(
            slot.message_for_delta("msg_1").err(),
            Some(ProtocolError::NoActiveItem {
                event: "output_text.delta"
            })
        );
        assert!(slot.open(message("msg_1")).is_ok());
        assert!(slot.message_for_delta("msg_1").is_ok());
        assert!(matches!(
            slot.reasoning_for_delta("reasoning_summary_text.delta"),
            Err(ProtocolError::WrongItemKind { .. })
        ));
        assert!(slot.take().is_some());
        assert!(slot.message_for_delta("").is_err());
    }

    #[test]
    fn a_text_delta_goes_to_the_item_it_names_or_nowhere() {
        let mut slot = ActiveItemSlot::default();
        assert!(slot.open(message("msg_1")).is_ok());
        assert!(slot.message_for_delta("msg_1").is_ok());
        // An empty id names nothing: today's streams without ids keep working.
        assert!(slot.message_for_delta("").is_ok());
        assert_eq!(
            slot.message_for_delta("msg_2").err(),
            Some(ProtocolError::OrphanDelta {
                event: "output_text.delta",
                named: "msg_2".into(),
                open: "msg_1".into(),
            })
        );
        // Without a provider id the active item cannot be named, so it takes the delta.
        let mut unnamed = message("item_assigned");
        unnamed.provider_id = None;
        assert!(slot.open(unnamed).is_err());
        assert!(slot.message_for_delta("msg_9").is_ok());
    }

    #[test]
    fn a_protocol_error_becomes_a_warning_naming_it_in_test_builds_too() {
        let warning = report_protocol_error(&ProtocolError::NoActiveItem {
            event: "output_text.delta",
        });
        assert_eq!(
            warning,
            "protocol error in the model's response stream: output_text.delta without an active item"
        );
    }

    #[test]
    fn at_most_one_item_is_active() {
        let mut slot = ActiveItemSlot::default();
        assert!(slot.open(message("a")).is_ok());
        match slot.open(message("b")) {
            Err(ProtocolError::OverlappingItems { open, new }) => {
                assert_eq!((open.as_str(), new.as_str()), ("a", "b"));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(slot.get().map(|item| item.id.as_str()), Some("b"));
    }

    #[test]
    fn items_without_provider_ids_keep_the_active_items_id_outside_the_item() {
        let active = ActiveItem {
            id: "item_assigned".into(),
            provider_id: None,
            kind: ActiveKind::Reasoning,
        };
        let done = ResponseItem::Reasoning {
            id: String::new(),
            summary: Vec::new(),
            content: None,
            encrypted_content: None,
        };
        assert_eq!(
            client_item_id(&done, Some(&active))
                .as_ref()
                .map(ItemId::as_str),
            Some("item_assigned")
        );
        // The assigned id names the item for the client; the item itself stays without one.
        assert_eq!(done.id(), None);
        let other_kind = ResponseItem::user_text("x");
        let assigned = client_item_id(&other_kind, Some(&active));
        assert!(assigned.is_some_and(|id| id != "item_assigned"));
        let with_id = ResponseItem::FunctionCall {
            id: Some("fc_1".into()),
            call_id: "c".into(),
            name: "n".into(),
            namespace: None,
            arguments: String::new(),
        };
        assert_eq!(
            client_item_id(&with_id, None).as_ref().map(ItemId::as_str),
            Some("fc_1")
        );
    }

    #[test]
    fn only_ids_of_the_shape_openturn_assigned_are_forgotten() {
        let message = |id: &str| ResponseItem::Message {
            id: Some(id.to_string()),
            role: "assistant".into(),
            content: Vec::new(),
            phase: None,
        };
        let legacy = ItemId::new_for_unnamed_output().into_string();
        assert_eq!(forget_legacy_assigned_id(message(&legacy)).id(), None);
        for kept in ["msg_1", "item_1", "item_0123456789ABCDEF0123456789abcdef"] {
            assert_eq!(forget_legacy_assigned_id(message(kept)).id(), Some(kept));
        }
        let reasoning = ResponseItem::Reasoning {
            id: legacy,
            summary: Vec::new(),
            content: None,
            encrypted_content: Some("enc".into()),
        };
        assert_eq!(forget_legacy_assigned_id(reasoning).id(), None);
    }

    #[test]
    fn tool_input_deltas_for_another_call_are_dropped() {
        let mut stream = ToolInputStream::new("call_1".into(), "apply_patch".into(), true);
        assert!(stream.consume(None, "*** Begin Patch").is_none());
        assert!(stream
            .consume(Some("call_1"), "\n*** Add File: a\n")
            .is_some());
        assert!(stream.consume(Some("call_2"), "X").is_none());
        assert_eq!(stream.input, "*** Begin Patch\n*** Add File: a\n");
    }
}
