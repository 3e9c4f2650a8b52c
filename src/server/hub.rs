//! What the connections of one daemon share: the thread manager, the server→client requests, the
//! shutdown lifecycle, the registry of live connections, and each loaded thread's projection
//! task and last status. A connection ([`super::context::ServerContext`]) owns its handshake, its
//! outbound queue and the set of threads it is subscribed to; the hub knows it only as a
//! [`Member`]. A thread's projection task asks the hub, once per round, which connections should
//! hear it (see [`Hub::audience`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::task::JoinHandle;

use crate::core::{ThreadId, ThreadManager};
use crate::protocol::jsonrpc::{NotificationEnvelope, JSONRPC_VERSION};
use crate::protocol::notification::{RateLimitSnapshot, ServerNotification};
use crate::protocol::thread::ThreadStatus;

use super::member::{ConnectionId, Member};
use super::outgoing::{encode_line, OutgoingSender};
use super::server_requests::ServerRequests;
use super::shutdown::Lifecycle;

/// What the daemon knows about each loaded thread, whoever loaded it.
#[derive(Default)]
pub(crate) struct SharedThreads {
    /// The last status announced per loaded thread, for `thread/list` and `thread/read`.
    pub(crate) statuses: HashMap<ThreadId, ThreadStatus>,
    /// Each loaded thread's projection task; it ends once the thread is dropped.
    pub(crate) projections: HashMap<ThreadId, JoinHandle<()>>,
}

/// See the module docs.
pub(crate) struct Hub {
    pub(crate) threads: Arc<ThreadManager>,
    pub(crate) server_requests: Arc<ServerRequests>,
    pub(crate) lifecycle: Arc<Lifecycle>,
    connections: Mutex<HashMap<ConnectionId, Weak<dyn Member>>>,
    loaded: Mutex<SharedThreads>,
    next_connection: AtomicU64,
    /// Bumped after any change to who hears what: a connection registered, forgotten or
    /// initialized, a subscription added or removed. A projection keeps its audience while this
    /// is unchanged, so a round of deltas does not look at every connection's state again.
    membership: AtomicU64,
    /// The last rate-limit snapshot a provider reported on any thread, for
    /// `account/rateLimits/read` (`None` until one arrives): the account's, so daemon-wide.
    last_rate_limits: Mutex<Option<RateLimitSnapshot>>,
}

/// The connections one round of a thread's notifications goes to.
#[derive(Default)]
pub(crate) struct Audience {
    /// Initialized connections subscribed to the thread.
    pub(crate) subscribers: Vec<Arc<dyn Member>>,
    /// Initialized connections that are not: they hear lifecycle notifications only.
    pub(crate) others: Vec<Arc<dyn Member>>,
}

impl Hub {
    /// Remembers the provider's latest rate-limit snapshot.
    pub(crate) fn record_rate_limits(&self, snapshot: &RateLimitSnapshot) {
        let mut last = self
            .last_rate_limits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *last = Some(snapshot.clone());
    }

    /// The provider's latest rate-limit snapshot, if any arrived.
    pub(crate) fn last_rate_limits(&self) -> Option<RateLimitSnapshot> {
        self.last_rate_limits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub(crate) fn new(
        threads: ThreadManager,
        server_requests: Arc<ServerRequests>,
        lifecycle: Arc<Lifecycle>,
    ) -> Arc<Hub> {
        Arc::new(Hub {
            threads: Arc::new(threads),
            server_requests,
            lifecycle,
            connections: Mutex::new(HashMap::new()),
            loaded: Mutex::new(SharedThreads::default()),
            next_connection: AtomicU64::new(0),
            membership: AtomicU64::new(0),
            last_rate_limits: Mutex::new(None),
        })
    }

    pub(crate) fn next_connection_id(&self) -> ConnectionId {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    fn connections(&self) -> MutexGuard<'_, HashMap<ConnectionId, Weak<dyn Member>>> {
        match self.connections.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn loaded(&self) -> MutexGuard<'_, SharedThreads> {
        match self.loaded.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn register(&self, id: ConnectionId, member: Weak<dyn Member>) {
        self.connections().insert(id, member);
        self.membership_changed();
    }

    /// Tells the projections their audiences may be stale; called after the change.
    pub(crate) fn membership_changed(&self) {
        self.membership.fetch_add(1, Ordering::AcqRel);
    }

    /// The count [`Hub::membership_changed`] bumps: an audience filled at one value is current
    /// while it stays.
    pub(crate) fn membership(&self) -> u64 {
        self.membership.load(Ordering::Acquire)
    }

    /// Forgets a connection that ended: it hears nothing more, and its pending questions are
    /// withdrawn (answered `Cancelled` when nobody else was asked). The rest of its ending is
    /// `unload::disconnect`'s.
    pub(crate) fn forget(&self, id: ConnectionId) {
        self.connections().remove(&id);
        self.membership_changed();
        self.server_requests.connection_closed(id);
    }

    /// Every live connection that finished its handshake.
    pub(crate) fn initialized(&self) -> Vec<Arc<dyn Member>> {
        let mut live: Vec<Arc<dyn Member>> = self
            .connections()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        // Filtered in place (the connections' lock is released first): one allocation a call.
        live.retain(|context| context.is_initialized());
        live
    }

    /// The initialized connections, split by whether they are subscribed to `thread_id`.
    /// Refills `audience` for `thread_id`, reusing its buffers and `scratch`'s, so a thread's
    /// projection finds its audience every round without allocating (the streaming hot path).
    pub(crate) fn fill_audience(
        &self,
        thread_id: &ThreadId,
        scratch: &mut Vec<Arc<dyn Member>>,
        audience: &mut Audience,
    ) {
        scratch.clear();
        scratch.extend(self.connections().values().filter_map(Weak::upgrade));
        audience.subscribers.clear();
        audience.others.clear();
        // The connections' lock is released before each connection's own state is read.
        for context in scratch.drain(..) {
            if !context.is_initialized() {
                continue;
            }
            if context.is_subscribed(thread_id) {
                audience.subscribers.push(context);
            } else {
                audience.others.push(context);
            }
        }
    }

    pub(crate) fn audience(&self, thread_id: &ThreadId) -> Audience {
        let (subscribers, others) = self
            .initialized()
            .into_iter()
            .partition(|context| context.is_subscribed(thread_id));
        Audience {
            subscribers,
            others,
        }
    }

    /// Sends one notification to every initialized connection, encoded once (each connection's
    /// opt-outs still apply).
    pub(crate) async fn broadcast(&self, notification: &ServerNotification) {
        let envelope = NotificationEnvelope {
            jsonrpc: JSONRPC_VERSION,
            notification,
            emitted_at_ms: chrono::Utc::now().timestamp_millis(),
        };
        let line = match encode_line(&envelope) {
            Ok(line) => line,
            Err(error) => {
                tracing::error!(%error, "notification could not be serialized");
                return;
            }
        };
        for context in self.initialized() {
            if !context.outgoing().is_opted_out(notification.method()) {
                let _ = context.outgoing().send_bytes(line.clone()).await;
            }
        }
    }

    /// The senders of the connections subscribed to `thread_id`, with their ids: who is asked a
    /// question the thread's turn puts to the client.
    pub(crate) fn subscriber_senders(
        &self,
        thread_id: &ThreadId,
    ) -> Vec<(ConnectionId, OutgoingSender)> {
        self.audience(thread_id)
            .subscribers
            .into_iter()
            .map(|context| (context.id(), context.outgoing().clone()))
            .collect()
    }
}
