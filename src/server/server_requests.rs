//! Requests the server sends to the client (approvals, client-tool calls): the id allocator
//! (starting at 0), the map of pending requests, the timeout, and the routing of replies.
//!
//! Core asks through an [`EventMsg::ClientRequest`](crate::core::EventMsg) carrying a reply slot;
//! the thread's projection task hands it here in event order, so the request line follows every
//! notification core emitted before it. Every pending request is answered exactly once: by the
//! client's reply (a malformed one counts as a decline / an invalid tool answer), by the timeout,
//! when its turn ends, or when the connection goes away — so no waiter ever hangs.
//! Approvals announce their end with `serverRequest/resolved`; client-tool calls do not
//! (docs/PROTOCOL.md §8).
//!
//! Each pending entry owns its timeout task through a [`TimeoutTimer`]: whichever way the entry
//! leaves the map, dropping it aborts the timer, so an answered request leaves no task behind.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde_json::json;
use serde_json::value::RawValue;

use crate::core::approval::{
    ClientReply, ClientRequest, ClientRequestKind, ClientToolResult, CommandDecision, ReplySlot,
};
use crate::core::TurnId;
use crate::protocol::approval::{
    CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse,
    DynamicToolCallParams, DynamicToolCallResponse, FileChangeRequestApprovalParams, ServerRequest,
    ServerRequestResolvedNotification, ToolRequestUserInputOption, ToolRequestUserInputParams,
    ToolRequestUserInputQuestion, ToolRequestUserInputResponse,
};
use crate::protocol::jsonrpc::{ErrorObject, RequestId};
use crate::protocol::mcp::{
    McpServerElicitationRequestParams, McpServerElicitationRequestResponse,
};
use crate::protocol::notification::ServerNotification;

use super::convert;
use super::member::ConnectionId;
use super::outgoing::OutgoingSender;

/// How long a request may wait for its answer. Approvals wait on a human, so this is generous;
/// it exists so that a client that never answers cannot hold a turn forever.
pub(crate) const SERVER_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);

struct PendingRequest {
    thread_id: String,
    /// `None` for an MCP elicitation asked between turns: no turn's end answers it.
    turn_id: Option<TurnId>,
    reply_kind: ReplyKind,
    reply: ReplySlot,
    /// Who was asked: every connection subscribed to the thread, each under an id of its own.
    recipients: Vec<Recipient>,
    /// Aborts the timeout task when the entry is dropped (answered, ended, drained).
    timer: TimeoutTimer,
}

/// One connection a request was sent to.
struct Recipient {
    connection: ConnectionId,
    id: i64,
    outgoing: OutgoingSender,
}

/// Owns one request's timeout task: dropping it aborts the task.
struct TimeoutTimer(Option<tokio::task::AbortHandle>);

impl TimeoutTimer {
    /// Called by the timeout task on its own entry: aborting itself mid-announce would leave the
    /// waiter unanswered.
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for TimeoutTimer {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}

/// The pending requests, by the id of their first recipient, and every recipient's id pointing
/// at its request.
#[derive(Default)]
struct Pending {
    requests: HashMap<i64, PendingRequest>,
    by_id: HashMap<i64, i64>,
}

impl Pending {
    fn remove(&mut self, key: i64) -> Option<PendingRequest> {
        let request = self.requests.remove(&key)?;
        for recipient in &request.recipients {
            self.by_id.remove(&recipient.id);
        }
        Some(request)
    }
}

pub(crate) struct ServerRequests {
    next_id: AtomicI64,
    pending: Mutex<Pending>,
    timeout: Duration,
}

impl ServerRequests {
    pub(crate) fn new(timeout: Duration) -> Arc<ServerRequests> {
        Arc::new(ServerRequests {
            next_id: AtomicI64::new(0),
            pending: Mutex::new(Pending::default()),
            timeout,
        })
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        match self.pending.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Number of requests waiting for an answer.
    #[cfg(test)]
    fn pending_count(&self) -> usize {
        self.pending().requests.len()
    }

    /// Registers `request` for `thread_id` and sends it to every connection in `to`, each under
    /// an id of its own; the first answer decides. With nobody to ask it is answered `Cancelled`
    /// at once.
    pub(crate) async fn send(
        self: &Arc<Self>,
        thread_id: &str,
        request: ClientRequest,
        to: Vec<(ConnectionId, OutgoingSender)>,
    ) {
        if to.is_empty() {
            request.reply.send(ClientReply::Cancelled);
            return;
        }
        let (message, reply_kind) = wire_request(thread_id, &request);
        let recipients: Vec<Recipient> = to
            .into_iter()
            .map(|(connection, outgoing)| Recipient {
                connection,
                id: self.next_id.fetch_add(1, Ordering::Relaxed),
                outgoing,
            })
            .collect();
        let sends: Vec<(i64, OutgoingSender)> = recipients
            .iter()
            .map(|recipient| (recipient.id, recipient.outgoing.clone()))
            .collect();
        let key = sends[0].0;
        // Registered before the lines go out: a reply may arrive at once. The timer starts
        // under the same lock, so it cannot look for its entry before the entry exists.
        {
            let mut pending = self.pending();
            let timer = self.spawn_timeout(key);
            for recipient in &recipients {
                pending.by_id.insert(recipient.id, key);
            }
            pending.requests.insert(
                key,
                PendingRequest {
                    thread_id: thread_id.to_string(),
                    turn_id: request.turn_id.clone(),
                    reply_kind,
                    reply: request.reply,
                    recipients,
                    timer,
                },
            );
        }
        for (id, outgoing) in sends {
            if outgoing
                .send_request(&RequestId::Integer(id), &message)
                .await
                .is_err()
            {
                // Nobody will answer on a closed connection.
                self.withdraw(|recipient| recipient.id == id);
            }
        }
    }

    /// Removes the recipients `gone` picks; a request left with nobody to answer it is answered
    /// `Cancelled`, and nothing is announced.
    fn withdraw(&self, gone: impl Fn(&Recipient) -> bool) {
        let orphaned: Vec<PendingRequest> = {
            let mut pending = self.pending();
            let Pending { requests, by_id } = &mut *pending;
            let mut empty = Vec::new();
            for (key, request) in requests.iter_mut() {
                request.recipients.retain(|recipient| {
                    let keep = !gone(recipient);
                    if !keep {
                        by_id.remove(&recipient.id);
                    }
                    keep
                });
                if request.recipients.is_empty() {
                    empty.push(*key);
                }
            }
            empty
                .into_iter()
                .filter_map(|key| pending.remove(key))
                .collect()
        };
        for request in orphaned {
            request.reply.send(ClientReply::Cancelled);
        }
    }

    /// A connection went away: it answers nothing any more.
    pub(crate) fn connection_closed(&self, connection: ConnectionId) {
        self.withdraw(|recipient| recipient.connection == connection);
    }

    /// The timeout task of the request keyed `key`; the returned timer, stored in its entry,
    /// owns it.
    fn spawn_timeout(self: &Arc<Self>, key: i64) -> TimeoutTimer {
        let requests: Weak<ServerRequests> = Arc::downgrade(self);
        let timeout = self.timeout;
        let task = tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let Some(requests) = requests.upgrade() else {
                return;
            };
            let Some(mut pending) = requests.pending().remove(key) else {
                return;
            };
            pending.timer.disarm();
            tracing::warn!(id = key, "server request timed out");
            announce(&pending).await;
            pending.reply.send(ClientReply::Failed(
                "the client did not answer in time".to_string(),
            ));
        });
        TimeoutTimer(Some(task.abort_handle()))
    }

    /// Routes a reply from connection `from`. False when that connection has no request with
    /// that id pending: a late answer, after another subscriber's decided, is ignored.
    pub(crate) async fn resolve(
        &self,
        from: ConnectionId,
        id: &RequestId,
        result: Result<&RawValue, ErrorObject>,
    ) -> bool {
        let RequestId::Integer(id) = *id else {
            return false;
        };
        let pending = {
            let mut pending = self.pending();
            let Some(key) = pending.by_id.get(&id).copied() else {
                return false;
            };
            let asked_here = pending.requests.get(&key).is_some_and(|request| {
                request
                    .recipients
                    .iter()
                    .any(|recipient| recipient.id == id && recipient.connection == from)
            });
            if !asked_here {
                return false;
            }
            match pending.remove(key) {
                Some(request) => request,
                None => return false,
            }
        };
        let reply = match result {
            Err(error) => ClientReply::Failed(error.message),
            Ok(raw) => match pending.reply_kind {
                ReplyKind::Decision => decode_decision(raw),
                ReplyKind::ToolResult => decode_tool_result(raw),
                ReplyKind::UserAnswers => decode_user_answers(raw),
                ReplyKind::Elicitation => decode_elicitation(raw),
            },
        };
        announce(&pending).await;
        pending.reply.send(reply);
        true
    }

    /// Answers every request of a turn that ended (after its `turn/completed`).
    pub(crate) async fn turn_ended(&self, thread_id: &str, turn_id: &TurnId) {
        let ended: Vec<PendingRequest> = {
            let mut pending = self.pending();
            let keys: Vec<i64> = pending
                .requests
                .iter()
                .filter(|(_, request)| {
                    request.thread_id == thread_id && request.turn_id.as_ref() == Some(turn_id)
                })
                .map(|(key, _)| *key)
                .collect();
            keys.into_iter()
                .filter_map(|key| pending.remove(key))
                .collect()
        };
        for request in ended {
            announce(&request).await;
            request.reply.send(ClientReply::Cancelled);
        }
    }

    /// The daemon is stopping: every waiter is answered `Cancelled`, nothing is announced.
    pub(crate) fn drain(&self) {
        let drained: Vec<PendingRequest> = {
            let mut pending = self.pending();
            pending.by_id.clear();
            pending.requests.drain().map(|(_, r)| r).collect()
        };
        for request in drained {
            request.reply.send(ClientReply::Cancelled);
        }
    }
}

/// Tells every connection that was asked that the request is settled, under its own id.
async fn announce(request: &PendingRequest) {
    if !request.reply_kind.announces_resolution() {
        return;
    }
    for recipient in &request.recipients {
        let notification =
            ServerNotification::ServerRequestResolved(ServerRequestResolvedNotification {
                thread_id: request.thread_id.clone(),
                request_id: RequestId::Integer(recipient.id),
            });
        let _ = recipient.outgoing.send_notification(&notification).await;
    }
}

/// Which reply a request expects, so the answer is decoded as that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReplyKind {
    Decision,
    ToolResult,
    UserAnswers,
    Elicitation,
}

impl ReplyKind {
    /// Requests that put a question to the user (approvals, questions) say when it is settled
    /// with `serverRequest/resolved`; a client tool call's result needs no announcement.
    fn announces_resolution(self) -> bool {
        self != ReplyKind::ToolResult
    }
}

/// The `turnId` of a request that must name one. Approvals, client tools and questions are asked
/// by a running turn, so only an elicitation between turns has none (it has its own field).
fn turn_id_field(request: &ClientRequest) -> String {
    request
        .turn_id
        .as_ref()
        .map(TurnId::to_string)
        .unwrap_or_default()
}

/// The protocol form of a core request and the reply it expects.
fn wire_request(thread_id: &str, request: &ClientRequest) -> (ServerRequest, ReplyKind) {
    match &request.kind {
        ClientRequestKind::CommandApproval(approval) => (
            ServerRequest::CommandExecutionRequestApproval(CommandExecutionRequestApprovalParams {
                kind: "command".to_string(),
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                item_id: approval.item_id.to_string(),
                started_at_ms: request.started_at_ms,
                environment_id: "local".to_string(),
                reason: approval.reason.clone(),
                command: approval.command.clone(),
                cwd: approval.cwd.clone(),
                command_actions: vec![json!({"type": "unknown", "command": approval.raw_command})],
                available_decisions: vec![
                    json!("accept"),
                    json!("acceptForSession"),
                    json!("decline"),
                    json!("cancel"),
                ],
            }),
            ReplyKind::Decision,
        ),
        ClientRequestKind::FileChangeApproval { item_id, reason } => (
            ServerRequest::FileChangeRequestApproval(FileChangeRequestApprovalParams {
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                item_id: item_id.to_string(),
                started_at_ms: request.started_at_ms,
                reason: reason.clone(),
                grant_root: None,
            }),
            ReplyKind::Decision,
        ),
        ClientRequestKind::ToolCall(call) => (
            ServerRequest::DynamicToolCall(DynamicToolCallParams {
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                call_id: call.call_id.to_string(),
                namespace: call.namespace.clone(),
                tool: call.tool.clone(),
                arguments: call.arguments.clone(),
            }),
            ReplyKind::ToolResult,
        ),
        ClientRequestKind::UserInput(input) => (
            ServerRequest::ToolRequestUserInput(ToolRequestUserInputParams {
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                item_id: input.call_id.to_string(),
                is_blocking: true,
                questions: input
                    .questions
                    .iter()
                    .map(|question| ToolRequestUserInputQuestion {
                        id: question.id.clone(),
                        header: question.header.clone(),
                        question: question.question.clone(),
                        is_other: true,
                        is_secret: false,
                        options: Some(
                            question
                                .options
                                .iter()
                                .map(|option| ToolRequestUserInputOption {
                                    label: option.label.clone(),
                                    description: option.description.clone(),
                                })
                                .collect(),
                        ),
                    })
                    .collect(),
            }),
            ReplyKind::UserAnswers,
        ),
        ClientRequestKind::McpElicitation { server, params } => (
            ServerRequest::McpServerElicitationRequest(elicitation_params(
                thread_id, request, server, params,
            )),
            ReplyKind::Elicitation,
        ),
    }
}

/// An MCP elicitation as the protocol's request: the thread and turn it belongs to beside the
/// server's own fields.
fn elicitation_params(
    thread_id: &str,
    request: &ClientRequest,
    server: &str,
    params: &serde_json::Value,
) -> McpServerElicitationRequestParams {
    let text = |key: &str| params.get(key).and_then(|v| v.as_str()).map(str::to_string);
    McpServerElicitationRequestParams {
        thread_id: thread_id.to_string(),
        turn_id: request.turn_id.as_ref().map(TurnId::to_string),
        server_name: server.to_string(),
        mode: text("mode").unwrap_or_else(|| "form".to_string()),
        message: text("message").unwrap_or_default(),
        meta: params.get("_meta").cloned(),
        requested_schema: params.get("requestedSchema").cloned(),
        url: text("url"),
        elicitation_id: text("elicitationId"),
    }
}

/// `{"action": "accept" | "decline" | "cancel", "content"?: …}`; anything else is invalid.
fn decode_elicitation(raw: &RawValue) -> ClientReply {
    match serde_json::from_str::<McpServerElicitationRequestResponse>(raw.get()) {
        Ok(response) if ["accept", "decline", "cancel"].contains(&response.action.as_str()) => {
            let mut answer = json!({"action": response.action});
            if let Some(content) = response.content {
                answer["content"] = content;
            }
            ClientReply::Elicitation(answer)
        }
        _ => ClientReply::Invalid,
    }
}

/// `{"answers": {"<question id>": {"answers": [...]}}}`; anything else is invalid.
fn decode_user_answers(raw: &RawValue) -> ClientReply {
    match serde_json::from_str::<ToolRequestUserInputResponse>(raw.get()) {
        Ok(response) => ClientReply::UserAnswers(
            response
                .answers
                .into_iter()
                .map(|(id, answer)| (id, answer.answers))
                .collect(),
        ),
        Err(_) => ClientReply::Invalid,
    }
}

/// `{"decision": …}`; anything else is malformed and counts as a decline.
fn decode_decision(raw: &RawValue) -> ClientReply {
    let Ok(response) = serde_json::from_str::<CommandExecutionRequestApprovalResponse>(raw.get())
    else {
        return ClientReply::Decision(CommandDecision::Decline);
    };
    let decision = match &response.decision {
        serde_json::Value::String(name) => match name.as_str() {
            "accept" => CommandDecision::Accept,
            "acceptForSession" => CommandDecision::AcceptForSession,
            "cancel" => CommandDecision::Cancel,
            _ => CommandDecision::Decline,
        },
        serde_json::Value::Object(map)
            if map.contains_key("acceptWithExecpolicyAmendment")
                || map.contains_key("applyNetworkPolicyAmendment") =>
        {
            CommandDecision::Accept
        }
        _ => CommandDecision::Decline,
    };
    ClientReply::Decision(decision)
}

fn decode_tool_result(raw: &RawValue) -> ClientReply {
    match serde_json::from_str::<DynamicToolCallResponse>(raw.get()) {
        Ok(response) => ClientReply::ToolResult(ClientToolResult {
            content_items: response
                .content_items
                .into_iter()
                .map(convert::tool_content_in)
                .collect(),
            success: response.success,
        }),
        Err(_) => ClientReply::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::approval::{ClientToolCall, CommandApproval};
    use tokio::sync::mpsc;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    fn approval() -> ClientRequestKind {
        ClientRequestKind::CommandApproval(CommandApproval {
            item_id: "call_1".into(),
            command: "/bin/sh -c 'x'".into(),
            raw_command: "x".into(),
            cwd: "/".into(),
            reason: None,
        })
    }

    fn tool_call() -> ClientRequestKind {
        ClientRequestKind::ToolCall(ClientToolCall {
            call_id: "call_2".into(),
            namespace: None,
            tool: "lookup".into(),
            arguments: json!({}),
        })
    }

    async fn lines(rx: &mut mpsc::Receiver<bytes::Bytes>) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        while let Ok(line) = rx.try_recv() {
            out.push(serde_json::from_slice(&line).unwrap());
        }
        out
    }

    #[tokio::test]
    async fn ids_start_at_zero_and_replies_reach_their_waiter() {
        let (lines_tx, mut lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
        let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
        requests
            .send(
                "thread",
                request,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        let sent = lines(&mut lines_rx).await;
        assert_eq!(sent[0]["id"], 0);
        assert_eq!(sent[0]["method"], "item/commandExecution/requestApproval");
        assert!(
            requests
                .resolve(
                    0,
                    &RequestId::Integer(0),
                    Ok(&raw(r#"{"decision":"accept"}"#))
                )
                .await
        );
        assert_eq!(
            reply_rx.await.ok(),
            Some(ClientReply::Decision(CommandDecision::Accept))
        );
        let resolved = lines(&mut lines_rx).await;
        assert_eq!(resolved[0]["method"], "serverRequest/resolved");
        assert_eq!(resolved[0]["params"]["requestId"], 0);
        assert!(
            !requests
                .resolve(0, &RequestId::Integer(0), Ok(&raw("{}")))
                .await
        );
    }

    #[tokio::test]
    async fn every_subscriber_is_asked_and_the_first_answer_wins() {
        let (first_tx, mut first_rx) = mpsc::channel(16);
        let (second_tx, mut second_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
        let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
        let to = vec![
            (7, OutgoingSender::new(first_tx)),
            (8, OutgoingSender::new(second_tx)),
        ];
        requests.send("thread", request, to).await;
        let (asked_first, asked_second) = (lines(&mut first_rx).await, lines(&mut second_rx).await);
        let (first_id, second_id) = (asked_first[0]["id"].clone(), asked_second[0]["id"].clone());
        assert_ne!(first_id, second_id);
        // An id asked of the other connection is not this one's to answer.
        let not_ours = RequestId::Integer(first_id.as_i64().unwrap());
        assert!(
            !requests
                .resolve(8, &not_ours, Ok(&raw(r#"{"decision":"accept"}"#)))
                .await
        );
        let ours = RequestId::Integer(second_id.as_i64().unwrap());
        assert!(
            requests
                .resolve(8, &ours, Ok(&raw(r#"{"decision":"decline"}"#)))
                .await
        );
        assert_eq!(
            reply_rx.await.ok(),
            Some(ClientReply::Decision(CommandDecision::Decline))
        );
        assert_eq!(
            lines(&mut first_rx).await[0]["params"]["requestId"],
            first_id
        );
        assert_eq!(
            lines(&mut second_rx).await[0]["params"]["requestId"],
            second_id
        );
        // The late answer from the first connection is ignored.
        assert!(
            !requests
                .resolve(7, &not_ours, Ok(&raw(r#"{"decision":"accept"}"#)))
                .await
        );
        assert_eq!(requests.pending_count(), 0);
    }

    #[tokio::test]
    async fn a_question_whose_every_recipient_left_is_cancelled() {
        let (first_tx, _first_rx) = mpsc::channel(16);
        let (second_tx, _second_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
        let (request, mut reply_rx) = ClientRequest::new("turn".into(), approval());
        let to = vec![
            (1, OutgoingSender::new(first_tx)),
            (2, OutgoingSender::new(second_tx)),
        ];
        requests.send("thread", request, to).await;
        requests.connection_closed(1);
        assert!(reply_rx.try_recv().is_err());
        requests.connection_closed(2);
        assert_eq!(reply_rx.await.ok(), Some(ClientReply::Cancelled));
        assert_eq!(requests.pending_count(), 0);
    }

    #[tokio::test]
    async fn malformed_replies_decline_and_invalid_tool_answers_are_flagged() {
        let (lines_tx, _lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
        let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
        requests
            .send(
                "thread",
                request,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        requests
            .resolve(0, &RequestId::Integer(0), Ok(&raw(r#"{"nope":1}"#)))
            .await;
        assert_eq!(
            reply_rx.await.ok(),
            Some(ClientReply::Decision(CommandDecision::Decline))
        );
        let (request, reply_rx) = ClientRequest::new("turn".into(), tool_call());
        requests
            .send(
                "thread",
                request,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        requests
            .resolve(0, &RequestId::Integer(1), Ok(&raw("{}")))
            .await;
        assert_eq!(reply_rx.await.ok(), Some(ClientReply::Invalid));
    }

    #[tokio::test]
    async fn ending_a_turn_or_the_connection_answers_every_waiter() {
        let (lines_tx, mut lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
        let (first, first_rx) = ClientRequest::new("turn".into(), approval());
        let (second, second_rx) = ClientRequest::new("other".into(), tool_call());
        requests
            .send(
                "thread",
                first,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        requests
            .send(
                "thread",
                second,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        lines(&mut lines_rx).await;
        requests.turn_ended("thread", &TurnId::from("turn")).await;
        assert_eq!(first_rx.await.ok(), Some(ClientReply::Cancelled));
        assert_eq!(
            lines(&mut lines_rx).await[0]["method"],
            "serverRequest/resolved"
        );
        assert_eq!(requests.pending_count(), 1);
        requests.drain();
        assert_eq!(second_rx.await.ok(), Some(ClientReply::Cancelled));
        assert_eq!(requests.pending_count(), 0);
    }

    #[tokio::test]
    async fn a_request_nobody_answers_times_out_and_is_cleaned_up() {
        let (lines_tx, _lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(Duration::from_millis(20));
        let (request, reply_rx) = ClientRequest::new("turn".into(), tool_call());
        requests
            .send(
                "thread",
                request,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        let reply = tokio::time::timeout(Duration::from_secs(20), reply_rx).await;
        assert!(matches!(reply, Ok(Ok(ClientReply::Failed(_)))));
        assert_eq!(requests.pending_count(), 0);
    }

    /// Tasks alive on this (current-thread) runtime once aborted ones have been reaped; the
    /// loop is bounded because an abort completes at the task's next poll.
    async fn alive_tasks_settled(expected: usize) -> usize {
        let metrics = tokio::runtime::Handle::current().metrics();
        for _ in 0..100 {
            if metrics.num_alive_tasks() == expected {
                break;
            }
            tokio::task::yield_now().await;
        }
        metrics.num_alive_tasks()
    }

    #[tokio::test]
    async fn an_answered_or_ended_request_leaves_no_timeout_task_behind() {
        let (lines_tx, _lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
        let before = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        let (answered, _answered_rx) = ClientRequest::new("turn".into(), tool_call());
        let (ended, _ended_rx) = ClientRequest::new("turn".into(), tool_call());
        let (drained, _drained_rx) = ClientRequest::new("other".into(), tool_call());
        requests
            .send(
                "thread",
                answered,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        requests
            .send(
                "thread",
                ended,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        requests
            .send(
                "thread",
                drained,
                vec![(0, OutgoingSender::new(lines_tx.clone()))],
            )
            .await;
        assert_eq!(alive_tasks_settled(before + 3).await, before + 3);
        requests
            .resolve(0, &RequestId::Integer(0), Ok(&raw("{}")))
            .await;
        assert_eq!(alive_tasks_settled(before + 2).await, before + 2);
        requests.turn_ended("thread", &TurnId::from("turn")).await;
        assert_eq!(alive_tasks_settled(before + 1).await, before + 1);
        requests.drain();
        assert_eq!(alive_tasks_settled(before).await, before);
    }
}
