//! Everything one response's events do, in one place. The sampling loop creates a
//! [`ResponseState`], hands each event of the stream to [`on_event`] and the final `completed` to
//! [`on_completed`], then drains the tools the response started and takes its result; nothing
//! outside this module reads or changes the state.
//!
//! `output_item.added` opens streaming state (the active item, or a custom tool call's input
//! stream); deltas update the client's view of the active item only; `output_item.done` flushes
//! the item's parser and commits the complete item (live history, then rollout) and, for a tool
//! call, queues its tool in order. Each kind of item has its own file: [`message`] (assistant
//! text), [`plan`] (plan mode's plan item), [`reasoning`], [`tool_calls`] (and [`in_flight`],
//! their tools until drained), [`web_search`] (the provider's searches). [`active_item`] is the one-item-at-a-time rule, [`announce`] the
//! started/completed events all of them send, [`state`] the state they share.
//!
//! Invariants (docs/ARCHITECTURE.md §6): at most one active item; `completed` is the only success
//! barrier: it flushes the parser of an item that never got `done`, and sets follow-up when
//! `end_turn == false`. Nothing after `completed` belongs to the response.

mod active_item;
mod announce;
mod in_flight;
mod message;
mod plan;
mod reasoning;
mod state;
mod tool_calls;
mod web_search;

use super::super::ids::ItemId;
use std::sync::atomic::Ordering;

use crate::core::event::EventMsg;
use crate::core::text::AssistantTextParser;
use crate::core::tools;
use crate::wire::{ResponseEvent, ResponseItem};

use super::turn_context::TurnContext;
use active_item::{client_item_id, ActiveItem, ActiveKind};
use announce::warn_protocol_error;

pub(crate) use active_item::forget_legacy_assigned_id;
pub(crate) use state::{ResponseState, SamplingResult};

/// `completed`: the parser of an item that never got `done` is finished here (its item stays
/// uncommitted), and `end_turn == false` asks for another sampling step.
pub(crate) async fn on_completed(
    turn: &TurnContext,
    state: &mut ResponseState,
    end_turn: Option<bool>,
) {
    if let Some(mut active) = state.active.take() {
        message::flush_active_text(turn, &mut active, &mut state.plan).await;
    }
    if end_turn == Some(false) {
        state.needs_follow_up = true;
    }
}

/// The stream ended, however (completed, failed, interrupted): a custom tool call whose input
/// was still streaming will never run, so a patch item it started completes as failed.
pub(crate) async fn on_stream_end(turn: &TurnContext, state: &mut ResponseState) {
    tool_calls::close_input(turn, state, None).await;
}

/// Applies one event of the response stream (any but `completed`) to the response.
pub(crate) async fn on_event(turn: &TurnContext, state: &mut ResponseState, event: ResponseEvent) {
    match event {
        ResponseEvent::OutputItemAdded(item) => on_item_added(turn, state, item).await,
        ResponseEvent::OutputItemDone(item) => on_item_done(turn, state, item).await,
        ResponseEvent::OutputTextDelta { item_id, delta } => {
            message::on_text_delta(turn, state, &item_id, delta).await
        }
        ResponseEvent::ReasoningSummaryDelta {
            delta,
            summary_index,
            ..
        } => reasoning::on_summary_delta(turn, state, delta, summary_index).await,
        ResponseEvent::ReasoningSummaryPartAdded { summary_index, .. } => {
            reasoning::on_summary_part(turn, state, summary_index).await
        }
        ResponseEvent::ReasoningSummaryDone {
            item_id,
            text,
            summary_index,
        } => reasoning::on_summary_done(turn, state, item_id, text, summary_index).await,
        ResponseEvent::ReasoningContentDelta {
            delta,
            content_index,
            ..
        } => reasoning::on_raw_reasoning(turn, state, delta, content_index).await,
        ResponseEvent::CustomToolCallInputDelta { call_id, delta, .. } => {
            tool_calls::on_input_delta(turn, state, call_id, delta).await
        }
        ResponseEvent::ServerModel(model)
            if model != state.settings.model
                && !turn.rerouted_announced.swap(true, Ordering::Relaxed) =>
        {
            turn.emit(EventMsg::ModelRerouted {
                turn_id: turn.turn_id.clone(),
                from_model: state.settings.model.clone(),
                to_model: model,
            })
            .await;
        }
        ResponseEvent::RateLimits(snapshot) => state.rate_limits = Some(snapshot),
        ResponseEvent::FailedUsage(usage) => state.failed_usage = Some(usage),
        // Function-call arguments have no streaming consumer: the call runs once it is done.
        ResponseEvent::FunctionCallArgumentsDelta { .. }
        | ResponseEvent::Created { .. }
        | ResponseEvent::ServerModel(_)
        | ResponseEvent::ModelsEtag(_)
        | ResponseEvent::Completed { .. } => {}
    }
}

/// `output_item.added`: opens streaming state for the item (see [`active_item`]) and, for an
/// item shown as it streams, announces it.
async fn on_item_added(turn: &TurnContext, state: &mut ResponseState, item: ResponseItem) {
    let provider_id = item.id().map(str::to_string);
    let Some(id) = client_item_id(&item, None) else {
        return;
    };
    let opened = match &item {
        ResponseItem::CustomToolCall { call_id, name, .. } => {
            tool_calls::open_input(turn, state, call_id.clone(), name.clone()).await;
            None
        }
        ResponseItem::FunctionCall { .. } => {
            tool_calls::close_input(turn, state, None).await;
            None
        }
        ResponseItem::WebSearchCall { .. } => {
            web_search::on_added(turn, &item).await;
            None
        }
        _ => streaming_item(&item, id.clone(), provider_id, state.plan_mode),
    };
    let Some(opened) = opened else { return };
    if let Err(error) = state.active.open(opened) {
        warn_protocol_error(turn, &error).await;
    }
    let plan_mode = state.plan_mode;
    let Some(active) = state.active.get_mut() else {
        return;
    };
    match &mut active.kind {
        ActiveKind::Reasoning => reasoning::start_reasoning(turn, id).await,
        ActiveKind::AgentMessage { parser, .. } => {
            // Text the provider put in the added item seeds the parser, so a tag split between it
            // and the first delta is still recognised.
            let seeded = parser.push(&item.message_text().unwrap_or_default());
            if plan_mode {
                message::emit_text_chunk(turn, active, &mut state.plan, seeded).await;
            } else {
                message::start_agent_message(turn, active, seeded.visible).await;
            }
        }
    }
}

/// The streaming state for an item that shows deltas to the client, if it is one.
fn streaming_item(
    item: &ResponseItem,
    id: ItemId,
    provider_id: Option<String>,
    plan_mode: bool,
) -> Option<ActiveItem> {
    let kind = match item {
        ResponseItem::Message { role, phase, .. } if role == "assistant" => {
            ActiveKind::AgentMessage {
                phase: phase.clone(),
                parser: Box::new(AssistantTextParser::new(plan_mode)),
                started: false,
                held_whitespace: String::new(),
            }
        }
        ResponseItem::Reasoning { .. } => ActiveKind::Reasoning,
        _ => return None,
    };
    Some(ActiveItem {
        id,
        provider_id,
        kind,
    })
}

/// The client id of a completed message or reasoning item, and whether its text already
/// streamed to the client under that id (then the item completes, it does not start again).
fn shown_id(item: &ResponseItem, active: Option<&ActiveItem>) -> (ItemId, bool) {
    // Messages and reasoning items always get an id; the fallback only keeps this total.
    let id = client_item_id(item, active).unwrap_or_else(ItemId::new_for_unnamed_output);
    let streamed = active.is_some_and(|active| {
        active.id == id
            && matches!(
                &active.kind,
                ActiveKind::Reasoning | ActiveKind::AgentMessage { started: true, .. }
            )
    });
    (id, streamed)
}

/// `output_item.done`: closes the active item (flushing its parser) and commits the complete
/// item by its kind; items the client is not shown go to history only.
async fn on_item_done(turn: &TurnContext, state: &mut ResponseState, item: ResponseItem) {
    tool_calls::close_input(turn, state, Some(&item)).await;
    let mut active = state.active.take();
    if let Some(active) = active.as_mut() {
        message::flush_active_text(turn, active, &mut state.plan).await;
    }
    match &item {
        ResponseItem::Message { role, phase, .. } if role == "assistant" => {
            let (id, streamed) = shown_id(&item, active.as_ref());
            let phase = phase.clone();
            message::commit_agent_message(turn, state, &item, id, phase, streamed).await;
        }
        ResponseItem::Reasoning { .. } => {
            let (id, streamed) = shown_id(&item, active.as_ref());
            reasoning::commit_reasoning(turn, state, item, id, streamed).await
        }
        ResponseItem::FunctionCall { .. } | ResponseItem::CustomToolCall { .. } => {
            tool_calls::commit_tool_call(turn, state, item).await;
        }
        ResponseItem::WebSearchCall { .. } => web_search::on_done(turn, item).await,
        _ if tools::tool_search::call_id(&item).is_some() => {
            tool_calls::commit_tool_search(turn, state, item).await;
        }
        _ => turn.record_history(item).await,
    }
}
