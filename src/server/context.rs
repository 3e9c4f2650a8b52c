//! The state one connection's handlers share.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use tokio::task::JoinHandle;

use crate::config::Config;
use crate::core::{ThreadId, ThreadManager};
use crate::protocol::notification::RateLimitSnapshot;
use crate::protocol::thread::ThreadStatus;

use super::outgoing::OutgoingSender;

/// Per-connection handshake state.
#[derive(Debug, Default, Clone)]
pub(crate) struct ConnectionState {
    pub(crate) initialized: bool,
    pub(crate) client_name: String,
    pub(crate) client_version: String,
    pub(crate) experimental_api: bool,
    /// Extra user skill folders set with `skills/extraRoots/set`.
    pub(crate) skill_extra_roots: Vec<std::path::PathBuf>,
}

/// What the connection knows about the threads loaded in this process.
#[derive(Default)]
pub(crate) struct LoadedThreads {
    /// Threads whose turn traffic this connection receives (start/resume/fork subscribe).
    pub(crate) subscribed: HashSet<ThreadId>,
    /// The last status announced per loaded thread, for `thread/list` and `thread/read`.
    pub(crate) statuses: HashMap<ThreadId, ThreadStatus>,
    /// Each loaded thread's projection task; it ends once the thread is dropped.
    pub(crate) projections: HashMap<ThreadId, JoinHandle<()>>,
}

pub(crate) struct ServerContext {
    pub(crate) config: Config,
    pub(crate) threads: ThreadManager,
    /// Requests we sent the client and are waiting on (approvals, client tools).
    pub(crate) server_requests: std::sync::Arc<super::server_requests::ServerRequests>,
    pub(crate) outgoing: OutgoingSender,
    pub(crate) connection: Mutex<ConnectionState>,
    pub(crate) loaded: Mutex<LoadedThreads>,
    /// The last rate-limit snapshot a provider reported on this connection's threads, for
    /// `account/rateLimits/read` (`None` until one arrives).
    pub(crate) last_rate_limits: Mutex<Option<RateLimitSnapshot>>,
    /// The connection's tasks and the tokens that stop them, in shutdown order.
    pub(crate) lifecycle: super::shutdown::Lifecycle,
}

impl ServerContext {
    pub(crate) fn connection(&self) -> MutexGuard<'_, ConnectionState> {
        match self.connection.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn loaded(&self) -> MutexGuard<'_, LoadedThreads> {
        match self.loaded.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Remembers the provider's latest rate-limit snapshot.
    pub(crate) fn record_rate_limits(&self, snapshot: &RateLimitSnapshot) {
        let mut last = match self.last_rate_limits.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *last = Some(snapshot.clone());
    }

    /// The provider's latest rate-limit snapshot, if any arrived.
    pub(crate) fn last_rate_limits(&self) -> Option<RateLimitSnapshot> {
        match self.last_rate_limits.lock() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn is_subscribed(&self, thread_id: &ThreadId) -> bool {
        self.loaded().subscribed.contains(thread_id)
    }

    pub(crate) fn subscribe(&self, thread_id: &ThreadId) {
        self.loaded().subscribed.insert(thread_id.clone());
    }

    /// The live status of a loaded thread; `notLoaded` otherwise.
    pub(crate) fn status_of(&self, thread_id: &ThreadId) -> ThreadStatus {
        if self.threads.get(thread_id).is_err() {
            return ThreadStatus::NotLoaded;
        }
        self.loaded()
            .statuses
            .get(thread_id)
            .cloned()
            .unwrap_or(ThreadStatus::Idle)
    }
}
