//! The goal of a live thread: reading it, setting and clearing it for the client, and counting
//! each finished turn on it. Every change is persisted as a `thread_goal` rollout line (the last
//! one is what a resume reads); the caller announces it (a handler after its response, a turn
//! through its events) so the notification's place among the others is the caller's to choose.

use crate::rollout::RolloutItem;
use crate::wire::ResponseItem;

use super::super::clock::now_unix_seconds;
use super::super::event::EventMsg;
use super::super::ids::TurnId;
use super::super::thread::Thread;
use super::model::{Goal, GoalError, GoalRequest, TurnEndKind, TurnVerdict, GOAL_TOOL_NAMES};

impl Thread {
    /// The thread's goal, if it has one.
    pub fn goal(&self) -> Option<Goal> {
        self.state().goal.goal.clone()
    }

    /// `thread/goal/set`: changes the goal and persists it. Starting the goal's first turn is
    /// [`Thread::start_goal_turn`]'s, once the caller answered.
    pub async fn set_goal(&self, request: GoalRequest) -> Result<Goal, GoalError> {
        let goal = {
            let mut state = self.state();
            let total = state.total_usage.total_tokens;
            state.goal.set(request, now_unix_seconds(), total)?
        };
        self.persist_goal(Some(&goal)).await;
        Ok(goal)
    }

    /// `thread/goal/clear`: removes the goal; true when there was one.
    pub async fn clear_goal(&self) -> bool {
        let cleared = self.state().goal.clear();
        if cleared {
            self.persist_goal(None).await;
        }
        cleared
    }

    /// Appends the goal (or its removal) to the rollout, best effort: a failure is a warning,
    /// as for every other line (the live goal stays as changed).
    pub(crate) async fn persist_goal(&self, goal: Option<&Goal>) {
        let Some(rollout) = &self.rollout else {
            return;
        };
        let goal = goal.and_then(|goal| serde_json::to_value(goal).ok());
        if let Err(error) = rollout.append(RolloutItem::ThreadGoal { goal }).await {
            tracing::warn!(%error, "rollout append of the goal failed");
            let warning = EventMsg::Warning {
                message: format!("could not save the goal to the rollout: {error}"),
            };
            if self.events_tx.send(warning).await.is_err() {
                tracing::debug!("event receiver gone");
            }
        }
    }

    /// Counts a finished turn on the active goal (tokens, time, the progress audit) and decides
    /// whether another turn follows. `None` when there was no active goal to count on.
    pub(crate) fn account_goal_turn_end(
        &self,
        turn_id: &TurnId,
        end: TurnEndKind,
        duration_ms: i64,
    ) -> Option<TurnVerdict> {
        let mut state = self.state();
        let progressed = match &state.goal.goal_turn {
            Some((goal_turn, start)) if goal_turn == turn_id => {
                called_a_tool(state.history.get(*start..).unwrap_or(&[]))
                    // A compaction shortened the history under the turn: it cannot be read
                    // back, so the turn is not held against the goal.
                    || *start > state.history.len()
            }
            _ => true,
        };
        let total = state.total_usage.total_tokens;
        state.goal.account_turn_end(
            turn_id,
            end,
            progressed,
            duration_ms,
            total,
            now_unix_seconds(),
        )
    }
}

/// Whether `items` hold a call of a tool other than the goal tools: the model did something.
fn called_a_tool(items: &[ResponseItem]) -> bool {
    items.iter().any(|item| match item {
        ResponseItem::FunctionCall { name, .. } | ResponseItem::CustomToolCall { name, .. } => {
            !GOAL_TOOL_NAMES.contains(&name.as_str())
        }
        _ => false,
    })
}
