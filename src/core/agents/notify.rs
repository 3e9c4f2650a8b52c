//! What a parent is told when a child finishes — a user message `<subagent_notification>`
//! carrying `{"agent_path", "status"}` — and how it reaches the parent's history without
//! starting a turn: appended at once while the parent is idle, else left in the parent's
//! mailbox for its next turn, which records it before the user's input (a message slipped into
//! a running turn between a call and its output would break the history the provider accepts).
//! Either way the model reads it with its next request. Also reads a child's origin back from
//! its rollout.

use crate::rollout::RolloutItem;
use crate::wire::ResponseItem;

use super::super::ids::ThreadId;
use super::super::thread::{PendingInput, Thread};
use super::status::AgentOrigin;
use super::status::AgentStatus;

/// The message a parent gets when `child` reached `status`.
pub(super) fn notification(child: &ThreadId, status: &AgentStatus) -> ResponseItem {
    let body = serde_json::json!({"agent_path": child.to_string(), "status": status.to_json()});
    ResponseItem::user_text(format!(
        "<subagent_notification>\n{body}\n</subagent_notification>"
    ))
}

/// The origin a child's rollout recorded (its `sub_agent_spawn` line).
pub fn origin_in(items: &[RolloutItem]) -> Option<AgentOrigin> {
    items.iter().find_map(|item| match item {
        RolloutItem::SubAgentSpawn {
            parent_thread_id,
            depth,
            agent_nickname,
        } => Some(AgentOrigin {
            parent_thread_id: ThreadId::parse(parent_thread_id).ok()?,
            depth: *depth,
            nickname: agent_nickname.clone(),
        }),
        _ => None,
    })
}

impl Thread {
    /// The messages left for the next turn, as input only the model sees (recorded in the
    /// history as the turn begins). Called under the state lock by the admission.
    pub(crate) fn take_mailbox(&self) -> Vec<PendingInput> {
        std::mem::take(
            &mut *self
                .mailbox
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
        .into_iter()
        .map(PendingInput::hidden)
        .collect()
    }

    /// Who spawned this thread, when a sub-agent tool did.
    pub fn origin(&self) -> Option<&AgentOrigin> {
        self.origin.get()
    }

    /// Appends `message` to the model-visible history (and the rollout) now when no turn runs,
    /// else leaves it for the next turn admitted ([`Thread::take_mailbox`]).
    pub(crate) async fn deliver_to_model(&self, message: ResponseItem) {
        {
            let mut state = self.state();
            if state.active.is_some() {
                self.mailbox
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(message);
                return;
            }
            state.history.push(message.clone());
        }
        if let Some(rollout) = &self.rollout {
            if let Err(error) = rollout.append(RolloutItem::ResponseItem(message)).await {
                tracing::warn!(%error, "could not record a sub-agent notification");
            }
        }
    }
}
