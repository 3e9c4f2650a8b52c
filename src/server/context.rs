//! The state of one connection, as its handlers see it: its handshake, its outbound queue, the
//! threads it is subscribed to, and (behind it, shared with every other connection of the
//! daemon) the thread manager, the server→client requests and the lifecycle — see [`super::hub`].

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::config::Config;
use crate::core::{ThreadId, ThreadManager};
use crate::protocol::notification::RateLimitSnapshot;
use crate::protocol::thread::ThreadStatus;

use super::hub::Hub;
use super::member::{ConnectionId, Member};
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

/// The loaded threads this connection hears.
#[derive(Default)]
pub(crate) struct LoadedThreads {
    /// Threads whose turn traffic this connection receives (start/resume/fork subscribe).
    pub(crate) subscribed: HashSet<ThreadId>,
}

pub(crate) struct ServerContext {
    /// The connection's number within the daemon.
    pub(crate) id: ConnectionId,
    pub(crate) config: Config,
    /// The daemon's one thread manager, shared by every connection.
    pub(crate) threads: Arc<ThreadManager>,
    /// Requests the daemon sent its clients and waits on (approvals, client tools); shared, since
    /// a question goes to every subscriber of its thread.
    pub(crate) server_requests: Arc<super::server_requests::ServerRequests>,
    pub(crate) outgoing: OutgoingSender,
    pub(crate) connection: Mutex<ConnectionState>,
    pub(crate) loaded: Mutex<LoadedThreads>,
    /// The daemon's tasks and the tokens that stop them, in shutdown order.
    pub(crate) lifecycle: Arc<super::shutdown::Lifecycle>,
    /// What the connections of this daemon share.
    pub(crate) hub: Arc<Hub>,
    /// `fs/watch` watches; they end with the connection.
    pub(crate) fs_watches: super::fs_watch::FsWatches,
    /// Running `fuzzyFileSearch` requests and sessions; they end with the connection.
    pub(crate) file_searches: super::file_search::FileSearches,
    /// The connection's running `command/exec` processes, by the client's `processId`.
    pub(crate) exec_processes: super::exec_processes::ExecProcesses,
    /// The connection's running `process/spawn` processes, by the client's `processHandle`.
    pub(crate) processes: super::exec_processes::ExecProcesses,
}

impl ServerContext {
    /// A new connection of `hub`, writing to `outgoing`; registered with the hub.
    pub(crate) fn connect(hub: &Arc<Hub>, config: Config, outgoing: OutgoingSender) -> Arc<Self> {
        let context = Arc::new(ServerContext {
            id: hub.next_connection_id(),
            config,
            threads: hub.threads.clone(),
            server_requests: hub.server_requests.clone(),
            outgoing,
            connection: Mutex::new(ConnectionState::default()),
            loaded: Mutex::new(LoadedThreads::default()),
            lifecycle: hub.lifecycle.clone(),
            hub: hub.clone(),
            fs_watches: Default::default(),
            file_searches: Default::default(),
            exec_processes: Default::default(),
            processes: Default::default(),
        });
        let member: std::sync::Weak<ServerContext> = Arc::downgrade(&context);
        hub.register(context.id, member);
        context
    }

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

    /// The provider's latest rate-limit snapshot, if any arrived.
    pub(crate) fn last_rate_limits(&self) -> Option<RateLimitSnapshot> {
        self.hub.last_rate_limits()
    }

    pub(crate) fn is_subscribed(&self, thread_id: &ThreadId) -> bool {
        self.loaded().subscribed.contains(thread_id)
    }

    /// Ends what only this connection could reach: its `command/exec` and `process/spawn`
    /// processes are killed, its watches and searches stopped.
    pub(crate) fn stop_owned_work(&self) {
        self.exec_processes.kill_all();
        self.processes.kill_all();
        self.fs_watches.stop_all();
        self.file_searches.stop_all();
    }

    pub(crate) fn subscribe(&self, thread_id: &ThreadId) {
        self.loaded().subscribed.insert(thread_id.clone());
        self.hub.membership_changed();
    }

    /// Stops following a thread; whether it was followed.
    pub(crate) fn unsubscribe(&self, thread_id: &ThreadId) -> bool {
        let was_subscribed = self.loaded().subscribed.remove(thread_id);
        self.hub.membership_changed();
        was_subscribed
    }

    /// The live status of a loaded thread; `notLoaded` otherwise.
    pub(crate) fn status_of(&self, thread_id: &ThreadId) -> ThreadStatus {
        if self.threads.get(thread_id).is_err() {
            return ThreadStatus::NotLoaded;
        }
        self.hub
            .loaded()
            .statuses
            .get(thread_id)
            .cloned()
            .unwrap_or(ThreadStatus::Idle)
    }
}

impl Member for ServerContext {
    fn id(&self) -> ConnectionId {
        self.id
    }

    fn outgoing(&self) -> &OutgoingSender {
        &self.outgoing
    }

    fn is_initialized(&self) -> bool {
        self.connection().initialized
    }

    fn is_subscribed(&self, thread_id: &ThreadId) -> bool {
        ServerContext::is_subscribed(self, thread_id)
    }

    fn subscribe(&self, thread_id: &ThreadId) {
        ServerContext::subscribe(self, thread_id);
    }

    fn unsubscribe(&self, thread_id: &ThreadId) {
        ServerContext::unsubscribe(self, thread_id);
    }
}
