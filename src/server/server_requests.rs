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
    /// Aborts the timeout task when the entry is dropped (answered, ended, drained).
    timer: TimeoutTimer,
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

pub(crate) struct ServerRequests {
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, PendingRequest>>,
    outgoing: OutgoingSender,
    timeout: Duration,
}

impl ServerRequests {
    pub(crate) fn new(outgoing: OutgoingSender, timeout: Duration) -> Arc<ServerRequests> {
        Arc::new(ServerRequests {
            next_id: AtomicI64::new(0),
            pending: Mutex::new(HashMap::new()),
            outgoing,
            timeout,
        })
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<i64, PendingRequest>> {
        match self.pending.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Number of requests waiting for an answer.
    #[cfg(test)]
    fn pending_count(&self) -> usize {
        self.pending().len()
    }

    /// Registers and sends `request` for `thread_id`.
    pub(crate) async fn send(self: &Arc<Self>, thread_id: &str, request: ClientRequest) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (message, reply_kind) = wire_request(thread_id, &request);
        // Registered before the line goes out: the reply may arrive at once. The timer starts
        // under the same lock, so it cannot look for its entry before the entry exists.
        {
            let mut pending = self.pending();
            let timer = self.spawn_timeout(id);
            pending.insert(
                id,
                PendingRequest {
                    thread_id: thread_id.to_string(),
                    turn_id: request.turn_id.clone(),
                    reply_kind,
                    reply: request.reply,
                    timer,
                },
            );
        }
        if self
            .outgoing
            .send_request(&RequestId::Integer(id), &message)
            .await
            .is_err()
        {
            // Nobody will answer on a closed connection.
            if let Some(pending) = self.pending().remove(&id) {
                pending.reply.send(ClientReply::Cancelled);
            }
        }
    }

    /// The timeout task of request `id`; the returned timer, stored in its entry, owns it.
    fn spawn_timeout(self: &Arc<Self>, id: i64) -> TimeoutTimer {
        let requests: Weak<ServerRequests> = Arc::downgrade(self);
        let timeout = self.timeout;
        let task = tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let Some(requests) = requests.upgrade() else {
                return;
            };
            let Some(mut pending) = requests.pending().remove(&id) else {
                return;
            };
            pending.timer.disarm();
            tracing::warn!(id, "server request timed out");
            requests.announce(&pending, id).await;
            pending.reply.send(ClientReply::Failed(
                "the client did not answer in time".to_string(),
            ));
        });
        TimeoutTimer(Some(task.abort_handle()))
    }

    /// Routes a client's reply. False when no request with that id is pending.
    pub(crate) async fn resolve(
        &self,
        id: &RequestId,
        result: Result<&RawValue, ErrorObject>,
    ) -> bool {
        let RequestId::Integer(id) = *id else {
            return false;
        };
        let Some(pending) = self.pending().remove(&id) else {
            return false;
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
        self.announce(&pending, id).await;
        pending.reply.send(reply);
        true
    }

    /// Answers every request of a turn that ended (after its `turn/completed`).
    pub(crate) async fn turn_ended(&self, thread_id: &str, turn_id: &TurnId) {
        let ended: Vec<(i64, PendingRequest)> = {
            let mut pending = self.pending();
            let ids: Vec<i64> = pending
                .iter()
                .filter(|(_, request)| {
                    request.thread_id == thread_id && request.turn_id.as_ref() == Some(turn_id)
                })
                .map(|(id, _)| *id)
                .collect();
            ids.into_iter()
                .filter_map(|id| pending.remove(&id).map(|request| (id, request)))
                .collect()
        };
        for (id, request) in ended {
            self.announce(&request, id).await;
            request.reply.send(ClientReply::Cancelled);
        }
    }

    /// The connection is gone: every waiter is answered `Cancelled`, nothing is announced.
    pub(crate) fn drain(&self) {
        let drained: Vec<PendingRequest> = self.pending().drain().map(|(_, r)| r).collect();
        for request in drained {
            request.reply.send(ClientReply::Cancelled);
        }
    }

    async fn announce(&self, request: &PendingRequest, id: i64) {
        if !request.reply_kind.announces_resolution() {
            return;
        }
        let notification =
            ServerNotification::ServerRequestResolved(ServerRequestResolvedNotification {
                thread_id: request.thread_id.clone(),
                request_id: RequestId::Integer(id),
            });
        let _ = self.outgoing.send_notification(&notification).await;
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
        let requests = ServerRequests::new(OutgoingSender::new(lines_tx), SERVER_REQUEST_TIMEOUT);
        let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
        requests.send("thread", request).await;
        let sent = lines(&mut lines_rx).await;
        assert_eq!(sent[0]["id"], 0);
        assert_eq!(sent[0]["method"], "item/commandExecution/requestApproval");
        assert!(
            requests
                .resolve(&RequestId::Integer(0), Ok(&raw(r#"{"decision":"accept"}"#)))
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
                .resolve(&RequestId::Integer(0), Ok(&raw("{}")))
                .await
        );
    }

    #[tokio::test]
    async fn malformed_replies_decline_and_invalid_tool_answers_are_flagged() {
        let (lines_tx, _lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(OutgoingSender::new(lines_tx), SERVER_REQUEST_TIMEOUT);
        let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
        requests.send("thread", request).await;
        requests
            .resolve(&RequestId::Integer(0), Ok(&raw(r#"{"nope":1}"#)))
            .await;
        assert_eq!(
            reply_rx.await.ok(),
            Some(ClientReply::Decision(CommandDecision::Decline))
        );
        let (request, reply_rx) = ClientRequest::new("turn".into(), tool_call());
        requests.send("thread", request).await;
        requests
            .resolve(&RequestId::Integer(1), Ok(&raw("{}")))
            .await;
        assert_eq!(reply_rx.await.ok(), Some(ClientReply::Invalid));
    }

    #[tokio::test]
    async fn ending_a_turn_or_the_connection_answers_every_waiter() {
        let (lines_tx, mut lines_rx) = mpsc::channel(16);
        let requests = ServerRequests::new(OutgoingSender::new(lines_tx), SERVER_REQUEST_TIMEOUT);
        let (first, first_rx) = ClientRequest::new("turn".into(), approval());
        let (second, second_rx) = ClientRequest::new("other".into(), tool_call());
        requests.send("thread", first).await;
        requests.send("thread", second).await;
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
        let requests =
            ServerRequests::new(OutgoingSender::new(lines_tx), Duration::from_millis(20));
        let (request, reply_rx) = ClientRequest::new("turn".into(), tool_call());
        requests.send("thread", request).await;
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
        let requests = ServerRequests::new(OutgoingSender::new(lines_tx), SERVER_REQUEST_TIMEOUT);
        let before = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        let (answered, _answered_rx) = ClientRequest::new("turn".into(), tool_call());
        let (ended, _ended_rx) = ClientRequest::new("turn".into(), tool_call());
        let (drained, _drained_rx) = ClientRequest::new("other".into(), tool_call());
        requests.send("thread", answered).await;
        requests.send("thread", ended).await;
        requests.send("thread", drained).await;
        assert_eq!(alive_tasks_settled(before + 3).await, before + 3);
        requests
            .resolve(&RequestId::Integer(0), Ok(&raw("{}")))
            .await;
        assert_eq!(alive_tasks_settled(before + 2).await, before + 2);
        requests.turn_ended("thread", &TurnId::from("turn")).await;
        assert_eq!(alive_tasks_settled(before + 1).await, before + 1);
        requests.drain();
        assert_eq!(alive_tasks_settled(before).await, before);
    }
}
