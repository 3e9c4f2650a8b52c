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

use serde_json::value::RawValue;

use crate::core::approval::{ClientReply, ClientRequest, ReplySlot};
use crate::core::TurnId;
use crate::protocol::approval::ServerRequestResolvedNotification;
use crate::protocol::jsonrpc::{ErrorObject, RequestId};
use crate::protocol::notification::ServerNotification;

use super::member::ConnectionId;
use super::outgoing::OutgoingSender;

mod wire;

use wire::{
    decode_decision, decode_elicitation, decode_tool_result, decode_user_answers, wire_request,
    ReplyKind,
};

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

#[cfg(test)]
mod tests;
