//! The plain data and seams of sub-agents that the control, the notifications, the manager and
//! the server share: the limits, a thread's origin, the tools' error, the server's side of the
//! seam ([`AgentHost`]) and the manager's ([`AgentThreads`]). A leaf: it names no other module
//! of `agents/`, and the manager implements [`AgentThreads`] so the control never names it.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::rollout::{RolloutContents, ThreadIndex};
use crate::wire::ResponseItem;

use super::super::error::CoreError;
use super::super::ids::ThreadId;
use super::super::settings::ThreadSettings;
use super::super::thread::Thread;
use super::super::thread_spawn::ThreadSpawn;
use super::status::AgentOrigin;

/// The `source` a sub-agent's session meta records (and `thread/list`'s `sourceKinds` names).
pub const SUBAGENT_SOURCE_KIND: &str = "subAgentThreadSpawn";
/// How deep a spawned thread may be: a child does not spawn (it is not offered the tools).
pub const MAX_DEPTH: i32 = 1;
/// How many sub-agents may run a turn at once in this daemon; a spawn past it is refused with a
/// tool error the model reads, and the model waits for or closes one first.
pub const MAX_RUNNING_AGENTS: usize = 6;
/// The namespace the tools are offered in.
pub const NAMESPACE: &str = "multi_agent_v1";

/// What the server does for a child thread core created or unloaded on its own: project its
/// events to the parent's subscribers, and announce its unloading.
pub trait AgentHost: Send + Sync {
    /// `spawn` is a child of `parent` that is now loaded: its events must reach the clients
    /// before its first turn starts (the returned future finishes once they will).
    fn attach(&self, parent: ThreadId, spawn: ThreadSpawn) -> BoxFuture<'static, ()>;
    /// Unloads `child` for every client (its turn interrupted, its rollout closed).
    fn detach(&self, child: ThreadId) -> BoxFuture<'static, ()>;
}

/// Why a sub-agent tool could not do what it was asked; the text goes to the model.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("agent {0} not found")]
    NotFound(String),
    #[error(
        "too many agents are running ({MAX_RUNNING_AGENTS} at most at once): wait for one with \
         wait_agent or close one with close_agent before spawning another"
    )]
    TooManyRunning,
    #[error("agents cannot spawn agents (the depth is bounded at {MAX_DEPTH})")]
    TooDeep,
    #[error("sub-agents are not available in this process")]
    Unavailable,
    #[error("{0}")]
    Core(#[from] CoreError),
}

/// What the control needs from the threads it spawns into and finds children among: the
/// thread manager's side of the seam, a trait so the control does not depend on the manager
/// that owns it.
pub trait AgentThreads: Send + Sync {
    /// A loaded thread by id.
    fn loaded(&self, thread_id: &ThreadId) -> Result<Arc<Thread>, CoreError>;
    /// The thread index of this home (where an unloaded child's rollout is found).
    fn thread_index(&self) -> Arc<ThreadIndex>;
    /// Creates and loads a child thread of `origin`'s parent, starting from `history`.
    fn start_child<'a>(
        &'a self,
        settings: ThreadSettings,
        origin: &'a AgentOrigin,
        history: Vec<ResponseItem>,
    ) -> BoxFuture<'a, Result<ThreadSpawn, CoreError>>;
    /// Loads an unloaded child from its rollout.
    fn resume_child(
        &self,
        contents: &RolloutContents,
        settings: ThreadSettings,
    ) -> Result<ThreadSpawn, CoreError>;
}
