//! Tool calls of one response: the input of a custom tool call as it streams (for
//! `apply_patch`, the patch parsed so far, shown to the client), and the complete call, recorded
//! and then queued to run (or answered at once) in call order.

use crate::core::event::EventMsg;
use crate::core::tools::{self, apply_patch, Routed};
use crate::wire::ResponseItem;

use super::super::turn_context::TurnContext;
use super::in_flight::InFlightTool;
use super::state::ResponseState;

/// A delta of the custom tool call's input; a delta naming another call is dropped.
pub(super) async fn on_input_delta(
    turn: &TurnContext,
    state: &mut ResponseState,
    call_id: Option<String>,
    delta: String,
) {
    if let Some(input) = state.tool_input.as_mut() {
        if input.consume(call_id.as_deref(), &delta) {
            if let Some(patch) = &input.patch {
                turn.emit(EventMsg::PatchUpdated {
                    turn_id: turn.turn_id.clone(),
                    item_id: input.call_id.clone(),
                    changes: apply_patch::tool::streamed_entries(patch.snapshot()),
                })
                .await;
            }
        }
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
