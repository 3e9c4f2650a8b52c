//! Tool calls of one response: the input of a custom tool call as it streams (for
//! `apply_patch` in a thread that shows patches as they stream: a `fileChange` item started when
//! the input begins, then the patch parsed so far shown to the client, then the item completed by
//! the tool, or here as failed when the call never arrives whole), and the complete call,
//! recorded and then queued to run (or answered at once) in call order.

use crate::core::event::EventMsg;
use crate::core::ids::ItemId;
use crate::core::items::{FileChangeEntry, ToolItemStatus, TurnItem};
use crate::core::tools::{self, Routed};
use crate::wire::ResponseItem;

use super::super::turn_context::TurnContext;
use super::active_item::ToolInputStream;
use super::in_flight::InFlightTool;
use super::state::ResponseState;

/// `output_item.added` of a custom tool call: its input starts streaming. When the thread shows
/// patches as they stream, a patch's `fileChange` item starts now, before any preview of it
/// (start, update, complete: a client rendering by item never sees an update for an item it
/// does not know). Otherwise nothing is shown until the tool starts the item with its changes.
pub(super) async fn open_input(
    turn: &TurnContext,
    state: &mut ResponseState,
    call_id: String,
    name: String,
) {
    close_input(turn, state, None).await;
    let preview = state.settings.apply_patch_streaming_events;
    let input = ToolInputStream::new(ItemId::from(call_id), name, preview);
    if input.patch.is_some() && !turn.item_is_open(&input.call_id) {
        turn.item_started(patch_item(
            &input.call_id,
            Vec::new(),
            ToolItemStatus::InProgress,
        ))
        .await;
    }
    state.tool_input = Some(input);
}

/// A delta of the custom tool call's input; a delta naming another call is dropped.
pub(super) async fn on_input_delta(
    turn: &TurnContext,
    state: &mut ResponseState,
    call_id: Option<String>,
    delta: String,
) {
    let Some(input) = state.tool_input.as_mut() else {
        return;
    };
    if let Some(changes) = input.consume(call_id.as_deref(), &delta) {
        let item_id = input.call_id.clone();
        emit_patch_update(turn, item_id, changes).await;
    }
}

/// Ends the input stream, if one is open. `done` is the item that ended it: when it is the
/// streamed call itself, the preview's last update goes out and the tool completes the item;
/// otherwise (another item, the response's end, an error, an interrupt) the call will never
/// run, so its item completes here as failed.
pub(super) async fn close_input(
    turn: &TurnContext,
    state: &mut ResponseState,
    done: Option<&ResponseItem>,
) {
    let Some(input) = state.tool_input.take() else {
        return;
    };
    let Some(mut preview) = input.patch else {
        return;
    };
    let arrived = matches!(done, Some(ResponseItem::CustomToolCall { call_id, .. }) if input.call_id == call_id.as_str());
    if arrived {
        if let Some(changes) = preview.finish() {
            emit_patch_update(turn, input.call_id, changes).await;
        }
        return;
    }
    if turn.item_is_open(&input.call_id) {
        let item = patch_item(&input.call_id, preview.entries(), ToolItemStatus::Failed);
        turn.item_completed(item).await;
    }
}

async fn emit_patch_update(turn: &TurnContext, item_id: ItemId, changes: Vec<FileChangeEntry>) {
    turn.emit(EventMsg::PatchUpdated {
        turn_id: turn.turn_id.clone(),
        item_id,
        changes,
    })
    .await;
}

fn patch_item(id: &ItemId, changes: Vec<FileChangeEntry>, status: ToolItemStatus) -> TurnItem {
    TurnItem::FileChange {
        id: id.clone(),
        changes,
        status,
    }
}

/// Records the call, then queues its tool (or its synthetic answer) in call order.
pub(super) async fn commit_tool_call(
    turn: &TurnContext,
    state: &mut ResponseState,
    item: ResponseItem,
) {
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

/// Records a `tool_search_call` and queues its answer, found at once among the ready MCP
/// servers' tools; the turn follows up so the model can call what it found.
pub(super) async fn commit_tool_search(
    turn: &TurnContext,
    state: &mut ResponseState,
    item: ResponseItem,
) {
    let servers = turn.thread.mcp_servers().map(|servers| servers.as_ref());
    let answer = tools::tool_search::answer(&item, servers, &state.settings);
    turn.record_history(item).await;
    state.needs_follow_up = true;
    state.in_flight.push_back(InFlightTool::Answered(answer));
}
