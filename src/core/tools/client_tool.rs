//! Client-implemented tools (`dynamicTools` on `thread/start`): the call becomes a
//! `dynamicToolCall` item and a question to the client; the client's answer is the output the
//! model sees. An invalid answer or an error fails the item and tells the model so.

use std::time::Instant;

use super::super::approval::{ClientReply, ClientRequestKind, ClientToolCall, ClientToolResult};
use super::super::items::{ToolContent, ToolItemStatus, TurnItem};
use super::handle::TurnHandle;
use super::output::ToolOutput;

const INVALID_REPLY: &str = "dynamic tool response was invalid";
const FAILED_REPLY: &str = "dynamic tool request failed";

fn item(call: &ClientToolCall, status: ToolItemStatus) -> TurnItem {
    TurnItem::DynamicToolCall {
        id: call.call_id.clone(),
        tool: call.tool.clone(),
        namespace: call.namespace.clone(),
        arguments: call.arguments.clone(),
        status,
        content_items: None,
        success: None,
        duration_ms: None,
    }
}

/// Asks the client to run the call. `None` when the turn ended before an answer.
pub(crate) async fn run(turn: &TurnHandle, call: ClientToolCall) -> Option<ToolOutput> {
    let clock = Instant::now();
    turn.item_started(item(&call, ToolItemStatus::InProgress))
        .await;
    let result = match turn.ask(ClientRequestKind::ToolCall(call.clone())).await {
        ClientReply::Cancelled => return None,
        ClientReply::ToolResult(result) => result,
        ClientReply::Failed(_) => failure(FAILED_REPLY),
        ClientReply::Invalid
        | ClientReply::Decision(_)
        | ClientReply::UserAnswers(_)
        | ClientReply::Elicitation(_) => failure(INVALID_REPLY),
    };
    let completed = TurnItem::DynamicToolCall {
        id: call.call_id.clone(),
        tool: call.tool.clone(),
        namespace: call.namespace.clone(),
        arguments: call.arguments.clone(),
        status: if result.success {
            ToolItemStatus::Completed
        } else {
            ToolItemStatus::Failed
        },
        content_items: Some(result.content_items.clone()),
        success: Some(result.success),
        duration_ms: Some(i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX)),
    };
    turn.item_completed(completed).await;
    Some(ToolOutput {
        call_id: call.call_id,
        custom: false,
        text: output_text(&result.content_items),
    })
}

fn failure(text: &str) -> ClientToolResult {
    ClientToolResult {
        content_items: vec![ToolContent::InputText {
            text: text.to_string(),
        }],
        success: false,
    }
}

/// The model-visible output: the text items in order; images are referenced by URL.
fn output_text(items: &[ToolContent]) -> String {
    items
        .iter()
        .map(|item| match item {
            ToolContent::InputText { text } => text.clone(),
            ToolContent::InputImage { image_url } => format!("[image: {image_url}]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
