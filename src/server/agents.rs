//! The server's side of sub-agents (`core/agents/`): a child thread core spawned is projected
//! like any loaded thread, its parent's subscribers are subscribed to it and every client hears
//! `thread/started`; a closed child is unloaded for every client (`notLoaded`). How a child
//! reads as a `Thread` object is `handlers/thread_object.rs`'s.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::core::agents::AgentHost;
use crate::core::{ThreadId, ThreadSpawn};
use crate::protocol::notification::{
    ServerNotification, ThreadStartedNotification, ThreadStatusChangedNotification,
};
use crate::protocol::thread::ThreadStatus;
use futures::future::BoxFuture;

use super::fanout::spawn_projection;
use super::handlers::thread_object::thread_object;
use super::hub::Hub;

/// Makes the hub's thread manager spawn sub-agents that this hub projects.
pub(crate) fn enable(hub: &Arc<Hub>) {
    let host = Arc::new(ServerAgentHost {
        hub: Arc::downgrade(hub),
    });
    hub.threads.enable_agents(host);
}

struct ServerAgentHost {
    hub: Weak<Hub>,
}

impl AgentHost for ServerAgentHost {
    fn attach(&self, parent: ThreadId, spawn: ThreadSpawn) -> BoxFuture<'static, ()> {
        let hub = self.hub.upgrade();
        Box::pin(async move {
            let Some(hub) = hub else {
                return;
            };
            let child = spawn.thread.clone();
            // Whoever follows the parent follows its children, from their first event.
            for connection in hub.audience(&parent).subscribers {
                connection.subscribe(&child.id);
            }
            hub.loaded()
                .statuses
                .insert(child.id.clone(), ThreadStatus::Idle);
            let agents = hub.threads.agents().clone();
            let id = child.id.clone();
            let root_turn = Arc::new(move || agents.root_turn_of(&id).map(|t| t.to_string()));
            spawn_projection(&hub, child.id.clone(), spawn.events_rx, Some(root_turn));
            let object = thread_object(&child, ThreadStatus::Idle, None);
            hub.broadcast(&ServerNotification::ThreadStarted(
                ThreadStartedNotification {
                    thread: Box::new(object),
                },
            ))
            .await;
        })
    }

    fn detach(&self, child: ThreadId) -> BoxFuture<'static, ()> {
        let hub = self.hub.upgrade();
        Box::pin(async move {
            let Some(hub) = hub else {
                return;
            };
            for connection in hub.initialized() {
                connection.unsubscribe(&child);
            }
            let projection = hub.loaded().projections.remove(&child);
            drop(hub.threads.unload_thread(&child).await);
            if let Some(handle) = projection {
                // The task ends once the thread (and so its event sender) is gone.
                if tokio::time::timeout(Duration::from_secs(1), handle)
                    .await
                    .is_err()
                {
                    tracing::warn!(thread_id = %child, "projection did not drain in time");
                }
            }
            hub.loaded().statuses.remove(&child);
            hub.broadcast(&ServerNotification::ThreadStatusChanged(
                ThreadStatusChangedNotification {
                    thread_id: child.to_string(),
                    status: ThreadStatus::NotLoaded,
                },
            ))
            .await;
        })
    }
}
