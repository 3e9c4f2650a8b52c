//! `web_search_call` items: searches the provider ran with its hosted tool. Each is shown to the
//! client as a `webSearch` item (started when the provider announces it, completed when it is
//! done) and kept in history as the provider sent it, so the next request replays it.

use crate::core::ids::ItemId;
use crate::core::items::{TurnItem, WebSearchAction};
use crate::wire::ResponseItem;

use super::super::turn_context::TurnContext;
use super::announce::{emit_completed, emit_started};

/// The client's view of a search item; `None` for any other item.
fn shown(item: &ResponseItem) -> Option<TurnItem> {
    let ResponseItem::WebSearchCall { id, action, .. } = item else {
        return None;
    };
    let action = WebSearchAction::from_wire(action.as_ref());
    Some(TurnItem::WebSearch {
        // A provider that names no id still gets one item on the client's side.
        id: id
            .as_deref()
            .map(ItemId::from)
            .unwrap_or_else(ItemId::new_for_unnamed_output),
        query: action
            .as_ref()
            .map(WebSearchAction::query)
            .unwrap_or_default(),
        action,
    })
}

/// `output_item.added` of a search: announce it (its query may still be unknown). Only an item
/// with the provider's id: without one, its `done` could not be matched to this start.
pub(super) async fn on_added(turn: &TurnContext, item: &ResponseItem) {
    if item.id().is_none() {
        return;
    }
    if let Some(shown) = shown(item) {
        emit_started(turn, shown).await;
    }
}

/// `output_item.done` of a search: history (then rollout), then the completed item; a search
/// never announced as started starts here.
pub(super) async fn on_done(turn: &TurnContext, item: ResponseItem) {
    let shown = shown(&item);
    turn.record_history(item).await;
    let Some(shown) = shown else { return };
    if !turn.item_is_open(shown.id()) {
        emit_started(turn, shown.clone()).await;
    }
    emit_completed(turn, shown).await;
}
