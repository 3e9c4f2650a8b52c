//! Asking the user whether a patch may be written (`item/fileChange/requestApproval`).

use super::super::super::approval::{
    await_reply, ClientReply, ClientRequest, ClientRequestKind, CommandDecision,
};
use super::super::super::event::EventMsg;
use super::super::super::ids::ItemId;
use super::super::handle::TurnHandle;

/// `Some(None)` to apply, `Some(Some(text))` when declined (the text goes to the model), `None`
/// when the turn ended first.
pub(crate) async fn ask(turn: &TurnHandle, item_id: &ItemId) -> Option<Option<String>> {
    let waiting = |waiting| EventMsg::WaitingOnApproval {
        turn_id: turn.turn_id.clone(),
        waiting,
    };
    turn.emit(waiting(true)).await;
    let (request, reply_rx) = ClientRequest::new(
        turn.turn_id.clone(),
        ClientRequestKind::FileChangeApproval {
            item_id: item_id.clone(),
            reason: None,
        },
    );
    turn.emit(EventMsg::ClientRequest(request)).await;
    let reply = await_reply(reply_rx, &turn.cancel).await;
    turn.emit(waiting(false)).await;
    match reply {
        ClientReply::Decision(CommandDecision::Accept | CommandDecision::AcceptForSession) => {
            Some(None)
        }
        ClientReply::Cancelled => None,
        ClientReply::Decision(CommandDecision::Cancel) => {
            turn.cancel.cancel();
            Some(Some(
                "the user declined this patch and ended the turn; no file was changed".into(),
            ))
        }
        _ => Some(Some(
            "the user declined this patch; no file was changed. Do not retry it as is.".into(),
        )),
    }
}
