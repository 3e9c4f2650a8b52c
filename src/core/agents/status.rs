//! A sub-agent's status as its parent's tools see it, and the note a thread keeps of its ended
//! turns that the status is read from. A leaf: the control, the notifications and the thread
//! itself all read these without importing one another.

use super::super::event::TurnOutcome;
use super::super::ids::{ThreadId, TurnId};
use super::super::items::TurnItem;

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

/// How many turns of a thread ended and how the last one did: what the control watches.
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
