//! What a request handler hands back: its one result (or error), the notifications that must
//! reach the client before it, and what follows it. Handlers never write to the connection
//! themselves; [`super::handle`] sends a [`Reply`] in the one order the protocol allows —
//! `before`, the response, then `after` (only when the response is a result) — so "exactly one
//! response per request, notifications around it in a fixed order" holds by type.

use std::sync::Arc;

use crate::core::{Thread, ThreadSpawn, TurnGate};
use crate::protocol::notification::ServerNotification;
use crate::protocol::thread as proto;

use super::super::errors::HandlerError;

/// A handler's answer to one request.
pub(crate) struct Reply<T> {
    /// Sent before the response, whatever its outcome: what the client must know first (a thread
    /// this request loaded is `idle`; a configuration key the request set is ignored).
    pub(crate) before: Vec<ServerNotification>,
    pub(crate) result: Result<T, HandlerError>,
    /// Done after the response, in order, only when `result` is `Ok`.
    pub(crate) after: Vec<After>,
}

/// One step after a successful response.
#[allow(
    clippy::large_enum_variant,
    reason = "a reply holds one or two steps for the time it takes to send them; boxing every \
              notification would cost an allocation each instead"
)]
pub(crate) enum After {
    Notify(ServerNotification),
    /// A new thread (`thread/start`, `thread/fork`): subscribe the connection, start forwarding
    /// the thread's events, and announce it with `thread/started` (boxed: a thread is large).
    Announce(Box<(proto::Thread, ThreadSpawn)>),
    /// Releases a new turn, held back so that its `turn/started` cannot overtake the response.
    OpenGate(TurnGate),
    /// Starts a loaded thread's MCP servers, so their start-up statuses follow the response.
    StartMcpServers(Arc<Thread>),
}

impl<T> Reply<T> {
    /// A reply with nothing around the response.
    pub(crate) fn plain(result: Result<T, HandlerError>) -> Reply<T> {
        Reply {
            before: Vec::new(),
            result,
            after: Vec::new(),
        }
    }

    /// A result followed by `after`.
    pub(crate) fn then(result: T, after: Vec<After>) -> Reply<T> {
        Reply {
            before: Vec::new(),
            result: Ok(result),
            after,
        }
    }

    /// Adds notifications to send before the response.
    pub(crate) fn preceded_by(mut self, mut before: Vec<ServerNotification>) -> Reply<T> {
        before.append(&mut self.before);
        self.before = before;
        self
    }
}

impl<T> From<Result<T, HandlerError>> for Reply<T> {
    fn from(result: Result<T, HandlerError>) -> Reply<T> {
        Reply::plain(result)
    }
}
