//! How a response's items are announced to the client: started, completed (recorded in the
//! rollout first), and the warning for an event that breaks the stream's rules. Shared by every
//! kind of item the response module handles.

use crate::core::event::EventMsg;
use crate::core::items::TurnItem;

use super::super::turn_context::TurnContext;
use super::active_item::{report_protocol_error, ProtocolError};

pub(super) async fn warn_protocol_error(turn: &TurnContext, error: &ProtocolError) {
    let message = report_protocol_error(error);
    turn.emit(EventMsg::Warning { message }).await;
}

pub(super) async fn emit_started(turn: &TurnContext, item: TurnItem) {
    turn.item_started(item).await;
}

pub(super) async fn emit_completed(turn: &TurnContext, item: TurnItem) {
    turn.item_completed(item).await;
}
