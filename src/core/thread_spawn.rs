//! What creating or loading a thread hands back: the thread and the receiver of its events. A
//! leaf, so the manager that makes these and the sub-agents' seam that passes them on to the
//! server do not depend on each other for it.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::event::EventMsg;
use super::thread::Thread;

/// A freshly created or loaded thread, with the receiver of its events for the server.
pub struct ThreadSpawn {
    pub thread: Arc<Thread>,
    pub events_rx: mpsc::Receiver<EventMsg>,
}
