//! One sampling request: send the history, consume the response stream, commit complete items.
//!
//! Invariants (design notes 000/003): `output_item.added` only opens streaming state for at most
//! one active item; deltas attach to the active item or are protocol errors; `output_item.done`
//! records the complete item in live history, then appends it to the rollout; `completed` is the
//! only success barrier and sets follow-up when `end_turn == false`.

use crate::client::{ClientError, RequestContext};
use crate::wire::{ReasoningSummary, ResponseEvent, ResponseItem, StreamError, TokenUsage};

use super::super::event::EventMsg;
use super::super::items::TurnItem;
use super::request::build_request;
use super::{persist_turn_item, TurnContext};

#[derive(Debug)]
pub(crate) enum SamplingError {
    Interrupted,
    Client(ClientError),
    Stream(StreamError),
}

/// What one successful response means for the turn.
pub(crate) struct SamplingResult {
    pub needs_follow_up: bool,
    pub final_items: Vec<TurnItem>,
}

/// The item currently receiving deltas.
struct ActiveItem {
    /// The id deltas refer to (the provider's item id).
    wire_id: String,
    item: TurnItem,
}

pub(super) async fn sample_once(turn: &TurnContext) -> Result<SamplingResult, SamplingError> {
    let settings = turn.thread.settings();
    let request = build_request(
        &settings,
        turn.thread.history(),
        turn.thread.id.as_str(),
        Vec::new(),
    );
    let context = RequestContext {
        thread_id: turn.thread.id.to_string(),
        originator: settings.originator.clone(),
        turn_state: Default::default(),
    };
    let provider = settings.provider.clone();
    let mut stream = tokio::select! {
        _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
        stream = turn.thread.client.stream(&provider, &request, &context) => {
            stream.map_err(SamplingError::Client)?
        }
    };
    let mut active: Option<ActiveItem> = None;
    let mut final_items = Vec::new();
    loop {
        let event = tokio::select! {
            biased;
            _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
            event = stream.next() => event,
        };
        let event = match event {
            None => return Err(SamplingError::Stream(StreamError::ClosedBeforeCompleted)),
            Some(Err(error)) => return Err(SamplingError::Stream(error)),
            Some(Ok(event)) => event,
        };
        match event {
            ResponseEvent::Completed {
                token_usage,
                end_turn,
                ..
            } => {
                emit_usage(turn, token_usage, &settings).await;
                return Ok(SamplingResult {
                    needs_follow_up: end_turn == Some(false),
                    final_items,
                });
            }
            ResponseEvent::OutputItemAdded(item) => {
                if let Some(opened) = open_item(&item) {
                    turn.emit(EventMsg::ItemStarted {
                        turn_id: turn.turn_id.clone(),
                        item: opened.item.clone(),
                    })
                    .await;
                    active = Some(opened);
                }
            }
            ResponseEvent::OutputItemDone(item) => {
                let was_active = active.take();
                if let Some(done) = complete_item(turn, &item, was_active).await {
                    if matches!(done, TurnItem::AgentMessage { .. }) {
                        final_items.push(done);
                    }
                }
                turn.record_history(item).await;
            }
            ResponseEvent::OutputTextDelta { item_id, delta } => {
                on_text_delta(turn, active.as_mut(), item_id, delta).await;
            }
            ResponseEvent::ReasoningSummaryDelta {
                item_id,
                delta,
                summary_index,
            } => {
                turn.emit(EventMsg::ReasoningSummaryDelta {
                    turn_id: turn.turn_id.clone(),
                    item_id,
                    delta,
                    summary_index,
                })
                .await;
            }
            ResponseEvent::ReasoningSummaryPartAdded {
                item_id,
                summary_index,
            } => {
                turn.emit(EventMsg::ReasoningSummaryPartAdded {
                    turn_id: turn.turn_id.clone(),
                    item_id,
                    summary_index,
                })
                .await;
            }
            ResponseEvent::ServerModel(model) if model != settings.model => {
                turn.emit(EventMsg::ModelRerouted {
                    turn_id: turn.turn_id.clone(),
                    from_model: settings.model.clone(),
                    to_model: model,
                })
                .await;
            }
            _ => {}
        }
    }
}

/// Opens streaming state for the item kinds that stream to the client.
fn open_item(item: &ResponseItem) -> Option<ActiveItem> {
    match item {
        ResponseItem::Message {
            id, role, phase, ..
        } if role == "assistant" => {
            let wire_id = id.clone().unwrap_or_else(new_item_id);
            Some(ActiveItem {
                item: TurnItem::AgentMessage {
                    id: wire_id.clone(),
                    text: String::new(),
                    phase: phase.clone(),
                },
                wire_id,
            })
        }
        ResponseItem::Reasoning { id, .. } => {
            let wire_id = if id.is_empty() {
                new_item_id()
            } else {
                id.clone()
            };
            Some(ActiveItem {
                item: TurnItem::Reasoning {
                    id: wire_id.clone(),
                    summary: Vec::new(),
                    content: Vec::new(),
                },
                wire_id,
            })
        }
        _ => None,
    }
}

async fn on_text_delta(
    turn: &TurnContext,
    active: Option<&mut ActiveItem>,
    item_id: String,
    delta: String,
) {
    match active {
        Some(ActiveItem {
            item: TurnItem::AgentMessage { id, text, .. },
            ..
        }) => {
            text.push_str(&delta);
            turn.emit(EventMsg::AgentMessageDelta {
                turn_id: turn.turn_id.clone(),
                item_id: id.clone(),
                delta,
            })
            .await;
        }
        _ => {
            tracing::error!(%item_id, "text delta without an active message item");
            turn.emit(EventMsg::Warning {
                message: format!("protocol error: text delta for {item_id} without an active item"),
            })
            .await;
        }
    }
}

/// Emits `ItemStarted` (if the item never streamed) and `ItemCompleted` for a finished item, and
/// persists it. Returns the completed item.
async fn complete_item(
    turn: &TurnContext,
    item: &ResponseItem,
    active: Option<ActiveItem>,
) -> Option<TurnItem> {
    let completed = match item {
        ResponseItem::Message {
            id, role, phase, ..
        } if role == "assistant" => TurnItem::AgentMessage {
            id: active
                .as_ref()
                .map(|a| a.wire_id.clone())
                .or_else(|| id.clone())
                .unwrap_or_else(new_item_id),
            text: item.message_text().unwrap_or_default(),
            phase: phase.clone(),
        },
        ResponseItem::Reasoning {
            id,
            summary,
            content,
            ..
        } => TurnItem::Reasoning {
            id: active
                .as_ref()
                .map(|a| a.wire_id.clone())
                .unwrap_or_else(|| {
                    if id.is_empty() {
                        new_item_id()
                    } else {
                        id.clone()
                    }
                }),
            summary: summary
                .iter()
                .map(|ReasoningSummary::SummaryText { text }| text.clone())
                .collect(),
            content: content
                .iter()
                .flatten()
                .map(|part| match part {
                    crate::wire::item::ReasoningContent::ReasoningText { text }
                    | crate::wire::item::ReasoningContent::Text { text } => text.clone(),
                })
                .collect(),
        },
        _ => return None,
    };
    if active.is_none() {
        turn.emit(EventMsg::ItemStarted {
            turn_id: turn.turn_id.clone(),
            item: completed.clone(),
        })
        .await;
    }
    persist_turn_item(turn, &completed).await;
    turn.emit(EventMsg::ItemCompleted {
        turn_id: turn.turn_id.clone(),
        item: completed.clone(),
    })
    .await;
    Some(completed)
}

async fn emit_usage(
    turn: &TurnContext,
    usage: Option<TokenUsage>,
    settings: &crate::core::ThreadSettings,
) {
    let last = usage.unwrap_or_default();
    let total = {
        let mut state = turn.thread.state();
        let total = &mut state.total_usage;
        total.input_tokens += last.input_tokens;
        total.cached_input_tokens += last.cached_input_tokens;
        total.output_tokens += last.output_tokens;
        total.reasoning_output_tokens += last.reasoning_output_tokens;
        total.total_tokens += last.total_tokens;
        *total
    };
    turn.emit(EventMsg::TokenCount {
        turn_id: turn.turn_id.clone(),
        total,
        last,
        model_context_window: settings.model_context_window,
    })
    .await;
    turn.emit(EventMsg::RateLimits {
        turn_id: turn.turn_id.clone(),
        snapshot: None,
    })
    .await;
}

fn new_item_id() -> String {
    format!("item_{}", uuid::Uuid::now_v7().simple())
}
