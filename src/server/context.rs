//! The state one connection's handlers share.

use std::sync::Mutex;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::core::ThreadManager;

use super::outgoing::OutgoingSender;

/// Per-connection handshake state.
#[derive(Debug, Default, Clone)]
pub struct ConnectionState {
    pub initialized: bool,
    pub client_name: String,
    pub client_version: String,
    pub experimental_api: bool,
}

pub struct ServerContext {
    pub config: Config,
    pub threads: ThreadManager,
    /// Requests we sent the client and are waiting on (approvals, client tools).
    pub server_requests: std::sync::Arc<super::server_requests::ServerRequests>,
    pub outgoing: OutgoingSender,
    pub connection: Mutex<ConnectionState>,
    /// Owns the per-thread projection tasks.
    pub projections: TaskTracker,
    /// Cancelled once every turn has ended, so projection tasks drain and stop.
    pub projections_stop: CancellationToken,
    /// Owns long-running request handlers (none may outlive the connection).
    pub handlers: TaskTracker,
}

impl ServerContext {
    pub fn connection(&self) -> std::sync::MutexGuard<'_, ConnectionState> {
        match self.connection.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}
