//! One `ask`: every question core puts to the client goes through [`Questions::ask`] — command
//! and patch approvals, MCP elicitations (openturn's tool approvals and a server's own
//! questions), the model's questions to the user, and client-tool calls. A tool reaches it
//! through its turn handle (`TurnHandle::ask`); an MCP server's question between turns through
//! the thread.
//!
//! Each thread has one [`Questions`]: it counts the thread's open questions by what they make
//! the thread wait on, and tells the client when that changes (`EventMsg::WaitingOnClient`,
//! projected as `thread/status/changed` with the `waitingOnApproval` / `waitingOnUserInput`
//! flags). A flag goes up with the first open question of its kind and comes down with the
//! last, so two approvals asked in parallel keep `waitingOnApproval` set until both are
//! answered. This file knows nothing of tools, turns or the thread.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, Mutex};
use tokio_util::sync::CancellationToken;

use super::approval::{await_reply, ClientReply, ClientRequest, ClientRequestKind};
use super::event::EventMsg;
use super::ids::TurnId;

/// What an open question makes the thread wait on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waits {
    /// A decision: command or patch approval, MCP elicitation.
    Approval,
    /// The user's answers to the model's questions.
    UserInput,
    /// Nothing the client shows as waiting: a client tool runs on its own.
    Nothing,
}

impl Waits {
    fn of(kind: &ClientRequestKind) -> Waits {
        match kind {
            ClientRequestKind::CommandApproval(_)
            | ClientRequestKind::FileChangeApproval { .. }
            | ClientRequestKind::McpElicitation { .. } => Waits::Approval,
            ClientRequestKind::UserInput(_) => Waits::UserInput,
            ClientRequestKind::ToolCall(_) => Waits::Nothing,
        }
    }
}

/// How many questions of each waiting kind are open.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct OpenCounts {
    approvals: usize,
    user_input: usize,
}

impl OpenCounts {
    fn counter(&mut self, waits: Waits) -> Option<&mut usize> {
        match waits {
            Waits::Approval => Some(&mut self.approvals),
            Waits::UserInput => Some(&mut self.user_input),
            Waits::Nothing => None,
        }
    }

    /// What the client is told: which flags are up.
    fn event(&self) -> EventMsg {
        EventMsg::WaitingOnClient {
            approval: self.approvals > 0,
            user_input: self.user_input > 0,
        }
    }
}

/// A thread's open questions. See the module docs.
pub(crate) struct Questions {
    events: mpsc::Sender<EventMsg>,
    /// An async lock, held while a change is announced: two questions opening and closing at
    /// once must reach the client in the order their counts changed, or the last word could be
    /// "not waiting" while one is still open.
    open: Mutex<OpenCounts>,
}

impl Questions {
    pub(crate) fn new(events: mpsc::Sender<EventMsg>) -> Arc<Questions> {
        Arc::new(Questions {
            events,
            open: Mutex::new(OpenCounts::default()),
        })
    }

    /// Puts `kind` to the client and waits for the answer; `Cancelled` when `cancel` fires (the
    /// turn or the thread ended) or the request was lost. `turn_id` is the turn that asks, `None`
    /// for a question between turns.
    pub(crate) async fn ask(
        self: &Arc<Self>,
        turn_id: Option<TurnId>,
        kind: ClientRequestKind,
        cancel: &CancellationToken,
    ) -> ClientReply {
        let (request, reply_rx) = self.open(turn_id, kind).await;
        self.wait(request, reply_rx, cancel).await
    }

    /// [`Questions::ask`], with `announce` run after the waiting flag went up and before the
    /// request goes out: the item a question is about is shown between the two, as the reference
    /// orders them.
    pub(crate) async fn ask_after(
        self: &Arc<Self>,
        turn_id: Option<TurnId>,
        kind: ClientRequestKind,
        cancel: &CancellationToken,
        announce: impl std::future::Future<Output = ()>,
    ) -> ClientReply {
        let (request, reply_rx) = self.open(turn_id, kind).await;
        announce.await;
        self.wait(request, reply_rx, cancel).await
    }

    /// Counts the question as open (raising its flag when it is the first of its kind).
    async fn open(
        self: &Arc<Self>,
        turn_id: Option<TurnId>,
        kind: ClientRequestKind,
    ) -> (OpenQuestion, oneshot::Receiver<ClientReply>) {
        let waits = Waits::of(&kind);
        let (request, reply_rx) = ClientRequest::of_turn(turn_id, kind);
        let mut open = OpenQuestion {
            questions: self.clone(),
            waits,
            request: Some(request),
            counted: false,
        };
        let mut counts = self.open.lock().await;
        let before = counts.event();
        if let Some(counter) = counts.counter(waits) {
            *counter = counter.saturating_add(1);
            // Counted from here on: dropped even while announcing, the guard uncounts it.
            open.counted = true;
            self.announce(before, &counts).await;
        }
        (open, reply_rx)
    }

    async fn wait(
        &self,
        mut open: OpenQuestion,
        reply_rx: oneshot::Receiver<ClientReply>,
        cancel: &CancellationToken,
    ) -> ClientReply {
        if let Some(request) = open.request.take() {
            if self
                .events
                .send(EventMsg::ClientRequest(request))
                .await
                .is_err()
            {
                tracing::debug!("event receiver gone: the question was not sent");
            }
        }
        let reply = await_reply(reply_rx, cancel).await;
        open.close().await;
        reply
    }

    /// Counts one question of `waits` closed, lowering its flag when it was the last (for a
    /// question dropped unanswered).
    async fn uncount(&self, waits: Waits) {
        let mut counts = self.open.lock().await;
        let before = counts.event();
        if let Some(counter) = counts.counter(waits) {
            *counter = counter.saturating_sub(1);
            self.announce(before, &counts).await;
        }
    }

    /// Tells the client the flags, when they differ from `before`. Called with the counts
    /// locked, so announcements leave in the order the counts changed.
    async fn announce(&self, before: EventMsg, counts: &OpenCounts) {
        let now = counts.event();
        if now != before && self.events.send(now).await.is_err() {
            tracing::debug!("event receiver gone: waiting flags not announced");
        }
    }
}

/// A question counted as open. Uncounted when its answer arrives; a question dropped unanswered
/// (its turn's task torn down) is uncounted by a task of its own, so its flag cannot stay up.
struct OpenQuestion {
    questions: Arc<Questions>,
    waits: Waits,
    /// The request, until it is sent.
    request: Option<ClientRequest>,
    /// Whether the question is counted in its thread's open questions.
    counted: bool,
}

impl OpenQuestion {
    async fn close(mut self) {
        if !self.counted {
            return;
        }
        let questions = self.questions.clone();
        let mut counts = questions.open.lock().await;
        let before = counts.event();
        if let Some(counter) = counts.counter(self.waits) {
            *counter = counter.saturating_sub(1);
        }
        // Uncounted only now: dropped while waiting for the lock, the guard still uncounts it.
        self.counted = false;
        questions.announce(before, &counts).await;
    }
}

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        let (questions, waits) = (self.questions.clone(), self.waits);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { questions.uncount(waits).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::approval::{ClientToolCall, CommandApproval, CommandDecision};

    fn approval(id: &str) -> ClientRequestKind {
        ClientRequestKind::CommandApproval(CommandApproval {
            item_id: id.into(),
            command: "x".into(),
            raw_command: "x".into(),
            cwd: "/".into(),
            reason: None,
        })
    }

    /// The next event: a question (answered with `reply`) or a flag change.
    async fn next(events: &mut mpsc::Receiver<EventMsg>) -> EventMsg {
        events.recv().await.expect("events closed")
    }

    fn flags(event: &EventMsg) -> Option<(bool, bool)> {
        match event {
            EventMsg::WaitingOnClient {
                approval,
                user_input,
            } => Some((*approval, *user_input)),
            _ => None,
        }
    }

    #[tokio::test]
    async fn the_approval_flag_stays_up_until_the_last_open_approval_is_answered() {
        let (events_tx, mut events) = mpsc::channel(16);
        let questions = Questions::new(events_tx);
        let cancel = CancellationToken::new();
        let first = tokio::spawn({
            let (questions, cancel) = (questions.clone(), cancel.clone());
            async move { questions.ask(None, approval("a"), &cancel).await }
        });
        assert_eq!(flags(&next(&mut events).await), Some((true, false)));
        let EventMsg::ClientRequest(first_request) = next(&mut events).await else {
            panic!("no request");
        };
        let second = tokio::spawn({
            let (questions, cancel) = (questions.clone(), cancel.clone());
            async move { questions.ask(None, approval("b"), &cancel).await }
        });
        // Already waiting: the second question raises nothing.
        let EventMsg::ClientRequest(second_request) = next(&mut events).await else {
            panic!("no second request");
        };
        first_request
            .reply
            .send(ClientReply::Decision(CommandDecision::Accept));
        assert!(first.await.is_ok());
        assert!(events.try_recv().is_err(), "the flag dropped with one open");
        second_request
            .reply
            .send(ClientReply::Decision(CommandDecision::Decline));
        assert!(second.await.is_ok());
        assert_eq!(flags(&next(&mut events).await), Some((false, false)));
    }

    #[tokio::test]
    async fn a_client_tool_raises_no_flag_and_a_dropped_question_still_lowers_its_own() {
        let (events_tx, mut events) = mpsc::channel(16);
        let questions = Questions::new(events_tx);
        let cancel = CancellationToken::new();
        let tool = tokio::spawn({
            let (questions, cancel) = (questions.clone(), cancel.clone());
            async move {
                let call = ClientToolCall {
                    call_id: "c".into(),
                    namespace: None,
                    tool: "t".into(),
                    arguments: serde_json::Value::Null,
                };
                questions
                    .ask(None, ClientRequestKind::ToolCall(call), &cancel)
                    .await
            }
        });
        assert!(matches!(
            next(&mut events).await,
            EventMsg::ClientRequest(_)
        ));
        let asking = tokio::spawn({
            let (questions, cancel) = (questions.clone(), cancel.clone());
            async move { questions.ask(None, approval("a"), &cancel).await }
        });
        assert_eq!(flags(&next(&mut events).await), Some((true, false)));
        assert!(matches!(
            next(&mut events).await,
            EventMsg::ClientRequest(_)
        ));
        asking.abort();
        assert_eq!(flags(&next(&mut events).await), Some((false, false)));
        tool.abort();
    }
}
