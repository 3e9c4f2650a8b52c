//! Reasoning items of one response: summary parts and deltas (or, in sequential-cutoff mode,
//! whole finished parts), raw reasoning deltas when the thread shows them, and the complete
//! item, which is what history keeps.

use super::super::super::ids::{ItemId, TurnId};
use crate::core::event::EventMsg;
use crate::core::items::TurnItem;
use crate::wire::item::ReasoningContent;
use crate::wire::{ReasoningSummary, ResponseItem};

use super::super::turn_context::TurnContext;
use super::announce::{emit_completed, emit_started, warn_protocol_error};
use super::state::ResponseState;

/// `output_item.added` for a reasoning item: it starts with nothing in it.
pub(super) async fn start_reasoning(turn: &TurnContext, id: ItemId) {
    emit_started(
        turn,
        TurnItem::Reasoning {
            id,
            summary: Vec::new(),
            content: Vec::new(),
        },
    )
    .await
}

pub(super) async fn on_summary_delta(
    turn: &TurnContext,
    state: &mut ResponseState,
    delta: String,
    summary_index: i64,
) {
    to_active_reasoning(
        turn,
        state,
        "reasoning_summary_text.delta",
        |turn_id, item_id| EventMsg::ReasoningSummaryDelta {
            turn_id,
            item_id,
            delta,
            summary_index,
        },
    )
    .await;
}

pub(super) async fn on_summary_part(
    turn: &TurnContext,
    state: &mut ResponseState,
    summary_index: i64,
) {
    to_active_reasoning(
        turn,
        state,
        "reasoning_summary_part.added",
        |turn_id, item_id| EventMsg::ReasoningSummaryPartAdded {
            turn_id,
            item_id,
            summary_index,
        },
    )
    .await;
}

/// Streaming mode: emits the event `wire_event` means for the active reasoning item, or warns
/// when no reasoning item is active (a protocol error). In sequential-cutoff mode parts are
/// shown whole when done, so nothing streams.
async fn to_active_reasoning(
    turn: &TurnContext,
    state: &mut ResponseState,
    wire_event: &'static str,
    event: impl FnOnce(TurnId, ItemId) -> EventMsg,
) {
    if state.sequential_cutoff {
        return;
    }
    match state.active.reasoning_for_delta(wire_event) {
        Ok(active) => {
            let item_id = active.id.clone();
            turn.emit(event(turn.turn_id.clone(), item_id)).await;
        }
        Err(error) => warn_protocol_error(turn, &error).await,
    }
}

/// Sequential-cutoff mode only: a finished summary part, shown whole — for the active reasoning
/// item only. A late part of an earlier item is stale and dropped, never attached to whatever
/// is active now.
pub(super) async fn on_summary_done(
    turn: &TurnContext,
    state: &mut ResponseState,
    item_id: String,
    text: String,
    summary_index: i64,
) {
    if !state.sequential_cutoff {
        return;
    }
    let Some(active) = state
        .active
        .reasoning_for_delta("reasoning_summary_text.done")
        .ok()
    else {
        tracing::debug!(%item_id, "summary for an item that is no longer active dropped");
        return;
    };
    let refers_to_active = active.provider_id.as_deref().unwrap_or(active.id.as_str()) == item_id;
    if !refers_to_active {
        tracing::debug!(%item_id, active = %active.id, "stale reasoning summary dropped");
        return;
    }
    let item_id = active.id.clone();
    if summary_index > 0 {
        turn.emit(EventMsg::ReasoningSummaryPartAdded {
            turn_id: turn.turn_id.clone(),
            item_id: item_id.clone(),
            summary_index,
        })
        .await;
    }
    turn.emit(EventMsg::ReasoningSummaryDelta {
        turn_id: turn.turn_id.clone(),
        item_id,
        delta: text,
        summary_index,
    })
    .await;
}

pub(super) async fn on_raw_reasoning(
    turn: &TurnContext,
    state: &mut ResponseState,
    delta: String,
    content_index: i64,
) {
    let show = state.show_raw_reasoning;
    match state.active.reasoning_for_delta("reasoning_text.delta") {
        Ok(active) if show => {
            let item_id = active.id.clone();
            turn.emit(EventMsg::ReasoningRawDelta {
                turn_id: turn.turn_id.clone(),
                item_id,
                delta,
                content_index,
            })
            .await;
        }
        Ok(_) => {}
        Err(error) => warn_protocol_error(turn, &error).await,
    }
}

/// `output_item.done` for a reasoning item: started here when it never streamed, completed, then
/// recorded in history.
pub(super) async fn commit_reasoning(
    turn: &TurnContext,
    state: &ResponseState,
    item: ResponseItem,
    id: ItemId,
    streamed: bool,
) {
    let completed = reasoning_item(&item, id, state.show_raw_reasoning);
    if !streamed {
        emit_started(turn, completed.clone()).await;
    }
    emit_completed(turn, completed).await;
    turn.record_history(item).await;
}

/// The client's view of a complete reasoning item: one string per summary part, and the raw
/// parts only when raw reasoning is shown.
fn reasoning_item(item: &ResponseItem, id: ItemId, show_raw: bool) -> TurnItem {
    let ResponseItem::Reasoning {
        summary, content, ..
    } = item
    else {
        return TurnItem::Reasoning {
            id,
            summary: Vec::new(),
            content: Vec::new(),
        };
    };
    let content = match (show_raw, content) {
        (true, Some(parts)) => parts
            .iter()
            .map(|part| match part {
                ReasoningContent::ReasoningText { text } | ReasoningContent::Text { text } => {
                    text.clone()
                }
            })
            .collect(),
        _ => Vec::new(),
    };
    TurnItem::Reasoning {
        id,
        summary: summary
            .iter()
            .map(|ReasoningSummary::SummaryText { text }| text.clone())
            .collect(),
        content,
    }
}
