//! Sub-agents: threads a thread's model spawns with the `multi_agent_v1` tools
//! (`tools/agents/`). This module owns what outlives one tool call — which thread spawned which,
//! each child's status as its parent sees it, the bound on how many run at once — and the seam
//! through which the server projects a child it did not create ([`AgentHost`]).
//!
//! A child is an ordinary thread with its own rollout: its first line after the session meta
//! (`sub_agent_spawn`) names its parent, depth and nickname, and its session meta's `source` is
//! `subAgentThreadSpawn`, which `thread/list` hides unless asked. It runs with its parent's
//! settings (provider, approvals, sandbox, cwd, MCP servers, of which it starts its own copies);
//! children are not offered the tools themselves, so the tree is one level deep.
//!
//! - `types`: the limits, [`AgentOrigin`], [`AgentError`] and the seams to the server
//!   ([`AgentHost`]) and the manager ([`AgentThreads`]).
//! - `status`: [`AgentStatus`] and the [`TurnEndNote`] it is read from.
//! - `control`: [`AgentControl`], which spawns, feeds, closes and reloads children.
//! - `notify`: what a parent is told when a child finishes.

mod control;
mod notify;
pub(crate) mod status;
mod types;

pub(crate) use control::child_settings;
pub(crate) use control::control_of;
pub use control::{AgentControl, SpawnRequest};
pub use notify::origin_in;
pub use status::{AgentOrigin, AgentStatus, TurnEndNote};
pub use types::{
    AgentError, AgentHost, AgentThreads, MAX_DEPTH, MAX_RUNNING_AGENTS, NAMESPACE,
    SUBAGENT_SOURCE_KIND,
};
