//! The server's side of sub-agents (`core/agents/`): a child thread core spawned is projected
//! like any loaded thread, its parent's subscribers are subscribed to it and every client hears
//! `thread/started`; a closed child is unloaded for every client (`notLoaded`). And how a child
//! reads as a `Thread` object: `parentThreadId`, `agentNickname`, `threadSource: "subagent"` and
//! a `source` of `{"subAgent": {"thread_spawn": …}}`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::core::agents::{origin_in, AgentHost, AgentOrigin, SUBAGENT_SOURCE_KIND};
use crate::core::{ThreadId, ThreadSpawn};
use crate::protocol::notification::{
    ServerNotification, ThreadStartedNotification, ThreadStatusChangedNotification,
};
use crate::protocol::thread::{self as proto, ThreadStatus};
use crate::rollout::{IndexEntry, RolloutItem, RolloutLine};

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

/// Fills a child's fields of its `Thread` object.
pub(crate) fn describe_child(object: &mut proto::Thread, origin: &AgentOrigin) {
    object.parent_thread_id = Some(origin.parent_thread_id.to_string());
    object.agent_nickname.clone_from(&origin.nickname);
    object.thread_source = Some(json!("subagent"));
    object.source = json!({"subAgent": {"thread_spawn": {
        "parent_thread_id": origin.parent_thread_id.to_string(),
        "depth": origin.depth,
        "agent_nickname": origin.nickname,
        "agent_path": null,
        "agent_role": null,
    }}});
}

/// Fills a persisted child's fields from the head of its rollout (the origin is its second
/// line; the index keeps only the source kind). A rollout that cannot say reads as `unknown`.
pub(crate) fn describe_persisted_child(object: &mut proto::Thread, entry: &IndexEntry) {
    if entry.source.as_deref() != Some(SUBAGENT_SOURCE_KIND) {
        return;
    }
    match origin_in_head(&entry.path) {
        Some(origin) => describe_child(object, &origin),
        None => object.source = json!("unknown"),
    }
}

/// How many lines of a rollout's head are read for a child's origin.
const HEAD_LINES: usize = 4;

fn origin_in_head(path: &Path) -> Option<AgentOrigin> {
    let file = std::fs::File::open(path).ok()?;
    let items: Vec<RolloutItem> = BufReader::new(file)
        .lines()
        .take(HEAD_LINES)
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<RolloutLine>(&line).ok())
        .map(|line| line.item)
        .collect();
    origin_in(&items)
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
