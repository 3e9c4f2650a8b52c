//! A connection as the hub sees it: its number and the few facts the fan-out reads (whether its
//! handshake is done, which threads it is subscribed to, its outbound queue). It owns no state;
//! [`super::context::ServerContext`] implements it. Kept apart from both, so the hub, which
//! registers connections, and a connection, which holds the hub, do not import each other.

use crate::core::ThreadId;

use super::outgoing::OutgoingSender;

/// A connection's number within this daemon; never reused.
pub(crate) type ConnectionId = u64;

/// See the module docs.
pub(crate) trait Member: Send + Sync {
    fn id(&self) -> ConnectionId;
    fn outgoing(&self) -> &OutgoingSender;
    /// Whether the connection finished its handshake (only those hear notifications).
    fn is_initialized(&self) -> bool;
    fn is_subscribed(&self, thread_id: &ThreadId) -> bool;
    /// Follows a thread from now on (a parent's subscribers follow the children it spawns).
    fn subscribe(&self, thread_id: &ThreadId);
    fn unsubscribe(&self, thread_id: &ThreadId);
}
