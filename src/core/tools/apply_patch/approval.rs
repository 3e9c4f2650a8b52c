//! Asking the user whether a patch may be written (`item/fileChange/requestApproval`).

use super::super::super::approval::{ClientReply, ClientRequestKind, CommandDecision};
use super::super::super::ids::ItemId;
use super::super::handle::TurnHandle;

/// `Some(None)` to apply, `Some(Some(text))` when declined (the text goes to the model), `None`
/// when the turn ended first.
pub(crate) async fn ask(turn: &TurnHandle, item_id: &ItemId) -> Option<Option<String>> {
    let reply = turn
        .ask(ClientRequestKind::FileChangeApproval {
            item_id: item_id.clone(),
            reason: None,
        })
        .await;
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
