//! Sub-agents: threads a thread's model spawns with the `multi_agent_v1` tools
//! (`tools/agents/`). This module owns what outlives one tool call — which thread spawned which,
//! each child's status as its parent sees it, the bound on how many run at once — and the seam
//! through which the server projects a child it did not create ([`AgentHost`]).
//!
//! A child is an ordinary thread with its own rollout: its first line after the session meta
//! (`sub_agent_spawn`) names its parent, depth and nickname, and its session meta's `source` is
//! `subAgentThreadSpawn`, which `thread/list` hides unless asked. It runs with its parent's
//! settings (provider, approvals, sandbox, cwd); children are not offered the tools themselves,
//! so the tree is one level deep.

mod control;
mod notify;

use futures::future::BoxFuture;

use super::event::TurnOutcome;
use super::ids::{ThreadId, TurnId};
use super::items::TurnItem;
use super::manager::ThreadSpawn;

pub(crate) use control::child_settings;
pub use control::{AgentControl, SpawnRequest};
pub use notify::origin_in;

/// The `source` a sub-agent's session meta records (and `thread/list`'s `sourceKinds` names).
pub const SUBAGENT_SOURCE_KIND: &str = "subAgentThreadSpawn";
/// How deep a spawned thread may be: a child does not spawn (it is not offered the tools).
pub const MAX_DEPTH: i32 = 1;
/// How many sub-agents may run a turn at once in this daemon; a spawn past it is refused with a
/// tool error the model reads, and the model waits for or closes one first.
pub const MAX_RUNNING_AGENTS: usize = 6;
/// The namespace the tools are offered in.
pub const NAMESPACE: &str = "multi_agent_v1";

/// Who spawned a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentOrigin {
    pub parent_thread_id: ThreadId,
    pub depth: i32,
    pub nickname: Option<String>,
}

/// A sub-agent's status as its parent's tools report it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AgentStatus {
    /// Spawned; its first turn has not ended.
    #[default]
    PendingInit,
    Running,
    Interrupted,
    /// Its last turn completed, with its last message.
    Completed(Option<String>),
    Errored(String),
    /// Closed by `close_agent`.
    Shutdown,
    NotFound,
}

impl AgentStatus {
    /// The status after a turn that ended with `outcome`.
    pub fn after(outcome: &TurnOutcome) -> AgentStatus {
        match outcome {
            TurnOutcome::Completed { final_items } => {
                AgentStatus::Completed(final_items.iter().rev().find_map(|item| match item {
                    TurnItem::AgentMessage { text, .. } => Some(text.clone()),
                    _ => None,
                }))
            }
            TurnOutcome::Interrupted => AgentStatus::Interrupted,
            TurnOutcome::Failed(error) => AgentStatus::Errored(error.message.clone()),
        }
    }

    /// Whether the agent stopped (a `wait_agent` on it returns).
    pub fn is_final(&self) -> bool {
        !matches!(self, AgentStatus::PendingInit | AgentStatus::Running)
    }

    /// The form the tools' outputs carry: a word, or `{"completed": …}` / `{"errored": …}`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            AgentStatus::PendingInit => json!("pending_init"),
            AgentStatus::Running => json!("running"),
            AgentStatus::Interrupted => json!("interrupted"),
            AgentStatus::Completed(message) => json!({"completed": message}),
            AgentStatus::Errored(message) => json!({"errored": message}),
            AgentStatus::Shutdown => json!("shutdown"),
            AgentStatus::NotFound => json!("not_found"),
        }
    }

    /// The client's word for it (`collabAgentToolCall.agentsStates`) and the message it carries.
    pub fn client_state(&self) -> (&'static str, Option<String>) {
        match self {
            AgentStatus::PendingInit => ("pendingInit", None),
            AgentStatus::Running => ("running", None),
            AgentStatus::Interrupted => ("interrupted", None),
            AgentStatus::Completed(message) => ("completed", message.clone()),
            AgentStatus::Errored(message) => ("errored", Some(message.clone())),
            AgentStatus::Shutdown => ("shutdown", None),
            AgentStatus::NotFound => ("notFound", None),
        }
    }
}

/// How many turns of a thread ended and how the last one did: what [`AgentControl`] watches.
#[derive(Debug, Clone, Default)]
pub struct TurnEndNote {
    pub ended: u64,
    pub last_turn: Option<TurnId>,
    pub status: AgentStatus,
}

impl TurnEndNote {
    pub(crate) fn record(&mut self, turn_id: &TurnId, outcome: &TurnOutcome) {
        self.ended += 1;
        self.last_turn = Some(turn_id.clone());
        self.status = AgentStatus::after(outcome);
    }
}

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
    Core(#[from] super::error::CoreError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Invariant: the statuses read as the reference's tool outputs spell them, and only a
    /// stopped agent ends a wait.
    #[test]
    fn statuses_read_as_the_tools_answer_them() {
        let answered = TurnOutcome::Completed {
            final_items: vec![TurnItem::AgentMessage {
                id: "m".into(),
                text: "done".into(),
                phase: None,
                memory_citation: None,
            }],
        };
        let status = AgentStatus::after(&answered);
        assert_eq!(status.to_json(), json!({"completed": "done"}));
        assert_eq!(status.client_state(), ("completed", Some("done".into())));
        assert!(status.is_final());
        assert_eq!(AgentStatus::NotFound.to_json(), json!("not_found"));
        assert_eq!(AgentStatus::PendingInit.to_json(), json!("pending_init"));
        assert!(!AgentStatus::Running.is_final());
        assert_eq!(
            AgentStatus::after(&TurnOutcome::Interrupted),
            AgentStatus::Interrupted
        );
    }
}
