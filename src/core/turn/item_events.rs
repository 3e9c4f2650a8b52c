//! What each item-level event of one response does: `output_item.added` opens streaming state,
//! deltas update the active item's client projection, `output_item.done` flushes the item's
//! parser and commits the complete item (live history, then rollout) and, for a tool call,
//! queues its tool in order.
//!
//! Deltas are display only: nothing here writes history except the done path.

use crate::wire::item::ReasoningContent;
use crate::wire::{ReasoningSummary, ResponseItem};

use super::super::event::EventMsg;
use super::super::ids::ItemId;
use super::super::items::TurnItem;
use super::super::text::citation::parse_memory_citation;
use super::super::text::{
    citations_in, split_complete_text, AssistantTextParser, PlanSegment, TextChunk,
};
use super::super::tools::handle::persist_turn_item;
use super::super::tools::{self, Routed, ToolOutput};
use super::active_item::{
    client_item_id, report_protocol_error, ActiveItem, ActiveKind, ProtocolError, ToolInputStream,
};
use super::sampling::{InFlightTool, ResponseState};
use super::turn_context::TurnContext;

/// Plan mode: the turn's plan item, opened by the first `<proposed_plan>` and completed once.
#[derive(Debug)]
pub(crate) struct PlanItemState {
    pub id: ItemId,
    pub started: bool,
    pub completed: bool,
}

pub(super) async fn warn_protocol_error(turn: &TurnContext, error: &ProtocolError) {
    let message = report_protocol_error(error);
    turn.emit(EventMsg::Warning { message }).await;
}

pub(super) async fn on_item_added(
    turn: &TurnContext,
    state: &mut ResponseState,
    item: ResponseItem,
) {
    let provider_id = item.id().map(str::to_string);
    let Some(id) = client_item_id(&item, None) else {
        return;
    };
    let opened = match &item {
        ResponseItem::CustomToolCall { call_id, name, .. } => {
            state.tool_input = Some(ToolInputStream::new(
                ItemId::from(call_id.clone()),
                name.clone(),
            ));
            None
        }
        ResponseItem::FunctionCall { .. } => {
            state.tool_input = None;
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
        ActiveKind::Reasoning => {
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
        ActiveKind::AgentMessage { parser, .. } => {
            // Text the provider put in the added item seeds the parser, so a tag split between it
            // and the first delta is still recognised.
            let seeded = parser.push(&item.message_text().unwrap_or_default());
            if plan_mode {
                emit_text_chunk(turn, active, &mut state.plan, seeded).await;
            } else {
                start_agent_message(turn, active, seeded.visible).await;
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

async fn emit_started(turn: &TurnContext, item: TurnItem) {
    turn.emit(EventMsg::ItemStarted {
        turn_id: turn.turn_id.clone(),
        item,
    })
    .await;
}

async fn emit_completed(turn: &TurnContext, item: TurnItem) {
    persist_turn_item(turn, &item).await;
    turn.emit(EventMsg::ItemCompleted {
        turn_id: turn.turn_id.clone(),
        item,
    })
    .await;
}

/// Emits the agent message's `item/started` (once) with `text` as its initial text.
async fn start_agent_message(turn: &TurnContext, active: &mut ActiveItem, text: String) {
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
            PlanSegment::PlanDelta(delta) if !plan.completed => {
                start_plan(turn, plan).await;
                turn.emit(EventMsg::PlanDelta {
                    turn_id: turn.turn_id.clone(),
                    item_id: plan.id.clone(),
                    delta,
                })
                .await;
            }
            PlanSegment::PlanDelta(_) | PlanSegment::PlanEnd => {}
        }
    }
}

async fn start_plan(turn: &TurnContext, plan: &mut PlanItemState) {
    if plan.started || plan.completed {
        return;
    }
    plan.started = true;
    let item = TurnItem::Plan {
        id: plan.id.clone(),
        text: String::new(),
    };
    emit_started(turn, item).await;
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

pub(super) async fn on_item_done(
    turn: &TurnContext,
    state: &mut ResponseState,
    item: ResponseItem,
) {
    state.tool_input = None;
    let mut active = state.active.take();
    if let Some(active) = active.as_mut() {
        flush_active_text(turn, active, &mut state.plan).await;
    }
    // Only messages and reasoning items use the id, and they always have one.
    let id = client_item_id(&item, active.as_ref()).unwrap_or_else(|| ItemId::from(""));
    let streamed = active.as_ref().is_some_and(|active| {
        active.id == id
            && matches!(
                &active.kind,
                ActiveKind::Reasoning | ActiveKind::AgentMessage { started: true, .. }
            )
    });
    match &item {
        ResponseItem::Message { role, phase, .. } if role == "assistant" => {
            let phase = phase.clone();
            commit_agent_message(turn, state, &item, id, phase, streamed).await;
        }
        ResponseItem::Reasoning { .. } => {
            let completed = reasoning_item(&item, id, state.show_raw_reasoning);
            if !streamed {
                emit_started(turn, completed.clone()).await;
            }
            emit_completed(turn, completed).await;
            turn.record_history(item).await;
        }
        ResponseItem::FunctionCall { .. } | ResponseItem::CustomToolCall { .. } => {
            commit_tool_call(turn, state, item).await;
        }
        _ => turn.record_history(item).await,
    }
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

async fn commit_agent_message(
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
        if !plan.completed {
            start_plan(turn, plan).await;
            plan.completed = true;
            let plan_item = TurnItem::Plan {
                id: plan.id.clone(),
                text: plan_text,
            };
            emit_completed(turn, plan_item).await;
        }
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

/// Records the call, then queues its tool (or its synthetic answer) in call order.
async fn commit_tool_call(turn: &TurnContext, state: &mut ResponseState, item: ResponseItem) {
    let routed = tools::route(&item, &state.settings);
    turn.record_history(item).await;
    match routed {
        Routed::Run(call) => {
            state.needs_follow_up = true;
            let call_id = call.call_id().clone();
            let handle = turn
                .thread
                .tasks
                .spawn(tools::run(turn.handle.clone(), call));
            state
                .in_flight
                .push_back(InFlightTool::Running { call_id, handle });
        }
        Routed::Refused(output) => {
            // The model must hear back about a call it made, so the turn follows up.
            state.needs_follow_up = true;
            state.in_flight.push_back(InFlightTool::Ready(output));
        }
        Routed::NotATool => {}
    }
}

/// The output recorded for a call whose tool never produced one (interrupt, crash).
pub(super) fn aborted_output(call_id: ItemId, why: &str) -> ToolOutput {
    ToolOutput {
        call_id,
        custom: false,
        text: why.to_string(),
    }
}
