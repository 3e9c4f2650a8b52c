//! Assistant messages of one response: deltas go through the item's text parser (hidden markup
//! removed, plan segments routed to the plan item), the item starts once visible text exists, and
//! the complete item is committed from its complete text.
//!
//! Deltas are display only: nothing here writes history except the commit of the done item.

use super::super::super::ids::ItemId;
use crate::core::event::EventMsg;
use crate::core::items::TurnItem;
use crate::core::text::citation::parse_memory_citation;
use crate::core::text::{citations_in, split_complete_text, PlanSegment, TextChunk};
use crate::wire::ResponseItem;

use super::super::turn_context::TurnContext;
use super::active_item::{ActiveItem, ActiveKind};
use super::announce::{emit_completed, emit_started, warn_protocol_error};
use super::plan::{complete_plan, plan_delta, start_plan, PlanItemState};
use super::state::ResponseState;

/// Emits the agent message's `item/started` (once) with `text` as its initial text.
pub(super) async fn start_agent_message(turn: &TurnContext, active: &mut ActiveItem, text: String) {
    let ActiveKind::AgentMessage { phase, started, .. } = &mut active.kind else {
        return;
    };
    if *started {
        return;
    }
    *started = true;
    let item = TurnItem::AgentMessage {
        id: active.id.clone(),
        text,
        phase: phase.clone(),
        memory_citation: None,
    };
    emit_started(turn, item).await;
}

pub(super) async fn on_text_delta(
    turn: &TurnContext,
    state: &mut ResponseState,
    item_id: &str,
    delta: String,
) {
    let active = match state.active.message_for_delta(item_id) {
        Ok(active) => active,
        Err(error) => return warn_protocol_error(turn, &error).await,
    };
    let ActiveKind::AgentMessage { parser, .. } = &mut active.kind else {
        return;
    };
    let chunk = parser.push_owned(delta);
    emit_text_chunk(turn, active, &mut state.plan, chunk).await;
}

/// Sends the visible part of parsed text; in plan mode, routes plan segments to the plan item.
pub(super) async fn emit_text_chunk(
    turn: &TurnContext,
    active: &mut ActiveItem,
    plan: &mut Option<PlanItemState>,
    chunk: TextChunk,
) {
    if !chunk.citations.is_empty() {
        // The completed item carries them, parsed from its complete text; the visible text
        // already omits their markup.
        tracing::debug!(count = chunk.citations.len(), "memory citations extracted");
    }
    let Some(plan) = plan.as_mut() else {
        return emit_agent_delta(turn, active, chunk.visible).await;
    };
    for segment in chunk.plan_segments {
        match segment {
            PlanSegment::Normal(text) => emit_agent_delta(turn, active, text).await,
            PlanSegment::PlanStart => start_plan(turn, plan).await,
            PlanSegment::PlanDelta(delta) => plan_delta(turn, plan, delta).await,
            PlanSegment::PlanEnd => {}
        }
    }
}

/// Sends visible text, starting the item first if it was deferred. Before the start, text that
/// is only whitespace is held back: an item must not open on nothing visible.
async fn emit_agent_delta(turn: &TurnContext, active: &mut ActiveItem, text: String) {
    if text.is_empty() {
        return;
    }
    let ActiveKind::AgentMessage {
        started,
        held_whitespace,
        ..
    } = &mut active.kind
    else {
        return;
    };
    let delta = if *started {
        text
    } else if text.trim().is_empty() {
        held_whitespace.push_str(&text);
        return;
    } else {
        let delta = std::mem::take(held_whitespace) + &text;
        start_agent_message(turn, active, String::new()).await;
        delta
    };
    turn.emit(EventMsg::AgentMessageDelta {
        turn_id: turn.turn_id.clone(),
        item_id: active.id.clone(),
        delta,
    })
    .await;
}

/// Finishes the active message's parser (once: the parser ignores a second finish) and sends
/// what it held back.
pub(super) async fn flush_active_text(
    turn: &TurnContext,
    active: &mut ActiveItem,
    plan: &mut Option<PlanItemState>,
) {
    let ActiveKind::AgentMessage { parser, .. } = &mut active.kind else {
        return;
    };
    let tail = parser.finish();
    if !tail.is_empty() {
        emit_text_chunk(turn, active, plan, tail).await;
    }
}

/// Commits a complete assistant message: the plan it carries (plan mode), its started event
/// when it never streamed, its completed event, then history; it becomes one of the turn's
/// final items.
pub(super) async fn commit_agent_message(
    turn: &TurnContext,
    state: &mut ResponseState,
    item: &ResponseItem,
    id: ItemId,
    phase: Option<String>,
    streamed: bool,
) {
    let raw_text = item.message_text().unwrap_or_default();
    let (visible, plan_text) = split_complete_text(&raw_text, state.plan_mode);
    if let (Some(plan), Some(plan_text)) = (state.plan.as_mut(), plan_text) {
        complete_plan(turn, plan, plan_text).await;
    }
    let completed = TurnItem::AgentMessage {
        id,
        text: visible,
        phase,
        // From the complete text, which is authoritative (and exists for unstreamed items too).
        memory_citation: parse_memory_citation(&citations_in(&raw_text)),
    };
    if !streamed {
        let mut started = completed.clone();
        if let TurnItem::AgentMessage { text, .. } = &mut started {
            text.clear();
        }
        emit_started(turn, started).await;
    }
    emit_completed(turn, completed.clone()).await;
    turn.record_history(item.clone()).await;
    state.final_items.push(completed);
}
