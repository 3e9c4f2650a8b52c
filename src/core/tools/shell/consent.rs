//! What the user is told and asked before a command runs: the once-per-thread warnings about a
//! sandbox that cannot be enforced or runs in its fallback mode, a refusal, and the approval
//! request with what each answer means for the command.

use super::invocation::{emit_item, Invocation};
use crate::core::approval::{ClientReply, ClientRequestKind, CommandApproval, CommandDecision};
use crate::core::event::EventMsg;
use crate::core::items::ToolItemStatus;
use crate::core::sandboxing::CommandSandbox;
use crate::core::tools::handle::TurnHandle;
use crate::core::tools::output::ToolOutput;

/// Tells the user, once per thread and sandbox mode, that commands under it cannot be confined
/// here and will be refused or asked about instead.
pub(super) async fn warn_unsupported_once(
    turn: &TurnHandle,
    sandbox: &CommandSandbox,
    reason: &str,
) {
    if !turn.env.first_sandbox_warning(sandbox.name()) {
        return;
    }
    turn.emit(EventMsg::Warning {
        message: format!(
            "sandbox `{}` cannot be enforced on this machine: {reason}. Commands will not run \
             confined: only plain read-only commands run without asking; anything else needs \
             approval, and with approval policy `never` it is refused.",
            sandbox.name()
        ),
    })
    .await;
}

/// Tells the user, once per thread and sandbox mode, that commands are confined by the
/// fallback mode and what it cannot contain there.
pub(super) async fn warn_fallback_once(turn: &TurnHandle, sandbox: &CommandSandbox, gaps: &str) {
    let key = match sandbox.name() {
        "read-only" => "fallback read-only",
        _ => "fallback workspace-write",
    };
    if !turn.env.first_sandbox_warning(key) {
        return;
    }
    turn.emit(EventMsg::Warning {
        message: format!("sandbox `{}`: {gaps}", sandbox.name()),
    })
    .await;
}

/// A command the thread's policies forbid: announced and completed as declined, never run.
pub(super) async fn refuse(turn: &TurnHandle, invocation: &Invocation, text: String) -> ToolOutput {
    tracing::info!(
        call_id = %invocation.call_id,
        "refused a command the thread's sandbox cannot confine"
    );
    emit_item(turn, &invocation.item(ToolItemStatus::InProgress), false).await;
    emit_item(turn, &invocation.item(ToolItemStatus::Declined), true).await;
    invocation.output(text)
}

/// Asks; `Some(None)` to go ahead, `Some(Some(output))` when refused, `None` when the turn ended.
pub(super) async fn ask_approval(
    turn: &TurnHandle,
    invocation: &Invocation,
    reason: Option<String>,
) -> Option<Option<ToolOutput>> {
    let reply = turn
        .ask_about(
            invocation.item(ToolItemStatus::InProgress),
            ClientRequestKind::CommandApproval(CommandApproval {
                item_id: invocation.call_id.clone(),
                command: invocation.display.clone(),
                raw_command: invocation.cmd.clone(),
                cwd: invocation.cwd.display().to_string(),
                reason,
            }),
        )
        .await;
    let (status, text) = match reply {
        ClientReply::Decision(CommandDecision::Accept) => return Some(None),
        ClientReply::Decision(CommandDecision::AcceptForSession) => {
            turn.env.approve_for_session(invocation.approval_key());
            return Some(None);
        }
        ClientReply::Cancelled => return None,
        ClientReply::Decision(CommandDecision::Cancel) => {
            // Cancel declines and ends the turn; the model still gets an answer for its call.
            turn.cancel.cancel();
            (
                ToolItemStatus::Declined,
                "The user cancelled this command; it did not run.",
            )
        }
        ClientReply::Decision(CommandDecision::Decline)
        | ClientReply::Invalid
        | ClientReply::ToolResult(_)
        | ClientReply::UserAnswers(_)
        | ClientReply::Elicitation(_) => (
            ToolItemStatus::Declined,
            "The user declined to run this command; it did not run.",
        ),
        ClientReply::Failed(_) => (
            ToolItemStatus::Failed,
            "The approval request failed; the command did not run.",
        ),
    };
    emit_item(turn, &invocation.item(status), true).await;
    Some(Some(invocation.output(text.to_string())))
}
