//! The tools one response started, awaited in call order after its stream ended, on every way
//! out (completed, failed or interrupted): no call is left in history without its output.

use super::super::super::ids::ItemId;
use std::collections::VecDeque;

use tokio::task::JoinHandle;

use crate::core::tools::ToolOutput;
use crate::wire::ResponseItem;

use super::super::turn_context::TurnContext;

/// A tool started by this response, awaited in call order after the stream.
pub(crate) enum InFlightTool {
    Running {
        call_id: ItemId,
        handle: JoinHandle<Option<ToolOutput>>,
    },
    /// A call that could not run, answered at once.
    Ready(ToolOutput),
    /// A call answered at once with an output item of its own kind (`tool_search`).
    Answered(ResponseItem),
}

/// Awaits the response's tools in call order and records each output. A tool that produced
/// none (the turn was interrupted, or it crashed) still gets an output, so the history never
/// holds a call without one and the next turn can be sampled.
pub(super) async fn drain(turn: &TurnContext, in_flight: &mut VecDeque<InFlightTool>) {
    while let Some(tool) = in_flight.pop_front() {
        let output = match tool {
            InFlightTool::Ready(output) => output,
            InFlightTool::Answered(item) => {
                turn.record_history(item).await;
                continue;
            }
            InFlightTool::Running { call_id, handle } => match handle.await {
                Ok(Some(output)) => output,
                Ok(None) => aborted_output(call_id, "aborted: the turn was interrupted"),
                Err(error) => {
                    tracing::error!(%error, %call_id, "tool task failed");
                    aborted_output(call_id, "the tool failed unexpectedly")
                }
            },
        };
        turn.record_history(turn.handle.output_item(output)).await;
    }
}

/// The output recorded for a call whose tool never produced one (interrupt, crash).
fn aborted_output(call_id: ItemId, why: &str) -> ToolOutput {
    ToolOutput {
        call_id,
        custom: false,
        text: why.to_string(),
    }
}
