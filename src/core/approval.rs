//! The questions core asks the client while a turn runs — approvals, elicitations, the model's
//! questions, client-tool calls — and the answers it understands (asked through the one `ask`,
//! `core/ask.rs`). Core never sees JSON-RPC: it emits a
//! [`ClientRequest`] event in turn order and waits on its [`ReplySlot`]; the server sends the
//! request, routes the reply back into the slot, and fills it with [`ClientReply::Cancelled`]
//! when the turn ends, the client goes away or the request times out. A dropped slot reads as
//! `Cancelled` too, so a waiter can never hang on a lost request.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ids::{ItemId, TurnId};
use super::items::ToolContent;

/// Asks before running a shell command.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandApproval {
    /// The command item's id (the call id).
    pub item_id: ItemId,
    /// The display string that would run, e.g. `/bin/bash -lc 'touch f'`.
    pub command: String,
    /// The command as the model wrote it.
    pub raw_command: String,
    pub cwd: String,
    /// The model's justification, when it gave one.
    pub reason: Option<String>,
}

/// The user's answer to a [`CommandApproval`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandDecision {
    Accept,
    AcceptForSession,
    Decline,
    /// Decline and end the turn.
    Cancel,
}

/// A call of a client-implemented tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientToolCall {
    pub call_id: ItemId,
    pub namespace: Option<String>,
    pub tool: String,
    pub arguments: serde_json::Value,
}

/// The client's result for a [`ClientToolCall`].
#[derive(Debug, Clone, PartialEq)]
pub struct ClientToolResult {
    pub content_items: Vec<ToolContent>,
    pub success: bool,
}

/// Questions the model asks the user (`request_user_input`).
#[derive(Debug, Clone, PartialEq)]
pub struct UserInputRequest {
    pub call_id: ItemId,
    pub questions: Vec<UserQuestion>,
}

/// One question for the user, with the choices the model offers.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserQuestion {
    pub id: String,
    pub header: String,
    pub question: String,
    #[serde(default)]
    pub options: Vec<UserQuestionOption>,
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserQuestionOption {
    pub label: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ClientRequestKind {
    CommandApproval(CommandApproval),
    /// May an `apply_patch` call write its files? Answered with a [`CommandDecision`].
    FileChangeApproval {
        item_id: ItemId,
        reason: Option<String>,
    },
    ToolCall(ClientToolCall),
    UserInput(UserInputRequest),
    /// An MCP server's `elicitation/create`, or openturn asking whether an MCP tool may run:
    /// `params` is the MCP elicitation (`mode`, `message`, `requestedSchema`, `_meta`);
    /// answered with [`ClientReply::Elicitation`].
    McpElicitation {
        server: String,
        params: serde_json::Value,
    },
}

/// What came back for a request.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientReply {
    Decision(CommandDecision),
    ToolResult(ClientToolResult),
    /// The user's answers to a [`UserInputRequest`], by question id, in the client's order.
    UserAnswers(Vec<(String, Vec<String>)>),
    /// The answer to an [`ClientRequestKind::McpElicitation`]: an MCP `ElicitResult`
    /// (`action`, `content`, `_meta`).
    Elicitation(serde_json::Value),
    /// The client answered with something that is not a valid answer to this request.
    Invalid,
    /// The client answered with an error.
    Failed(String),
    /// No answer will come: the turn ended, the client went away, or the request timed out.
    Cancelled,
}

/// Where the answer goes. Cloneable so the request can travel inside an event; the first
/// `send` wins and later ones are ignored.
#[derive(Clone)]
pub struct ReplySlot(Arc<Mutex<Option<oneshot::Sender<ClientReply>>>>);

impl ReplySlot {
    fn new() -> (ReplySlot, oneshot::Receiver<ClientReply>) {
        let (reply_tx, reply_rx) = oneshot::channel();
        (ReplySlot(Arc::new(Mutex::new(Some(reply_tx)))), reply_rx)
    }

    /// Delivers the answer; false when it was already answered or nobody waits any more.
    pub fn send(&self, reply: ClientReply) -> bool {
        let sender = match self.0.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        sender.is_some_and(|sender| sender.send(reply).is_ok())
    }
}

impl std::fmt::Debug for ReplySlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplySlot")
    }
}

impl PartialEq for ReplySlot {
    fn eq(&self, other: &ReplySlot) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A question for the client, as it travels in [`super::EventMsg::ClientRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRequest {
    /// The turn that asks; `None` for an MCP elicitation that arrived between turns.
    pub turn_id: Option<TurnId>,
    pub started_at_ms: i64,
    pub kind: ClientRequestKind,
    pub reply: ReplySlot,
}

impl ClientRequest {
    /// A request of `turn_id` and the receiver its answer arrives on (tests build requests
    /// with it; core asks through `core/ask.rs`).
    #[cfg(test)]
    pub(crate) fn new(
        turn_id: TurnId,
        kind: ClientRequestKind,
    ) -> (ClientRequest, oneshot::Receiver<ClientReply>) {
        ClientRequest::of_turn(Some(turn_id), kind)
    }

    /// A request of the turn running now, if any, and the receiver its answer arrives on.
    pub(crate) fn of_turn(
        turn_id: Option<TurnId>,
        kind: ClientRequestKind,
    ) -> (ClientRequest, oneshot::Receiver<ClientReply>) {
        let (reply, reply_rx) = ReplySlot::new();
        let request = ClientRequest {
            turn_id,
            started_at_ms: super::clock::now_unix_millis(),
            kind,
            reply,
        };
        (request, reply_rx)
    }
}

/// Waits for an answer; a cancelled turn or a lost request reads as `Cancelled`.
pub(crate) async fn await_reply(
    reply_rx: oneshot::Receiver<ClientReply>,
    cancel: &CancellationToken,
) -> ClientReply {
    tokio::select! {
        reply = reply_rx => reply.unwrap_or(ClientReply::Cancelled),
        _ = cancel.cancelled() => ClientReply::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_dropped_request_reads_as_cancelled_and_only_the_first_answer_counts() {
        let (request, reply_rx) = ClientRequest::new(
            "t".into(),
            ClientRequestKind::ToolCall(ClientToolCall {
                call_id: "c".into(),
                namespace: None,
                tool: "x".into(),
                arguments: serde_json::Value::Null,
            }),
        );
        drop(request);
        let cancel = CancellationToken::new();
        assert_eq!(await_reply(reply_rx, &cancel).await, ClientReply::Cancelled);

        let (request, reply_rx) = ClientRequest::new(
            "t".into(),
            ClientRequestKind::ToolCall(ClientToolCall {
                call_id: "c".into(),
                namespace: None,
                tool: "x".into(),
                arguments: serde_json::Value::Null,
            }),
        );
        assert!(request.reply.send(ClientReply::Invalid));
        assert!(!request.reply.send(ClientReply::Cancelled));
        assert_eq!(await_reply(reply_rx, &cancel).await, ClientReply::Invalid);
    }
}
