//! Edits of a loaded thread's model-visible history between turns: `thread/revert` (drop a turn
//! and every later one) and `thread/inject_items` (append items the next request carries). Both
//! are persisted before the live history changes, so a restart reads what the next request sends.

use crate::rollout::{read_rollout, RolloutItem};
use crate::wire::ResponseItem;

use super::error::CoreError;
use super::manager::history_of;
use super::thread::Thread;

impl Thread {
    /// Drops the turn `before_turn_id` and every later one: the model-visible history becomes
    /// what it was when that turn started (injected items before it stay), and one
    /// `history_reverted` line records it. Refused while a turn runs, as its lines are still
    /// being written. Returns the newest turn kept, if any.
    pub async fn revert_to_before(
        &self,
        before_turn_id: &str,
    ) -> Result<Option<String>, CoreError> {
        self.refuse_while_running("revert")?;
        let Some(rollout) = &self.rollout else {
            return Err(CoreError::NoRollout(self.id.to_string()));
        };
        // Every line appended so far is in the file once its append was acknowledged.
        rollout.flush().await?;
        let path = rollout.path().to_path_buf();
        let contents = tokio::task::spawn_blocking(move || read_rollout(&path))
            .await
            .map_err(|error| CoreError::Internal(format!("rollout worker: {error}")))??;
        let Some((start, newest_kept)) = live_turn_start(&contents.items, before_turn_id) else {
            // The reference's text; a turn an earlier revert dropped is not found either.
            return Err(CoreError::InvalidInput(format!(
                "turn not found: {before_turn_id}"
            )));
        };
        let replacement_history = history_of(&contents.items[..start]);
        // A turn that started while the file was read would have its lines cut by this line.
        self.refuse_while_running("revert")?;
        rollout
            .append(RolloutItem::HistoryReverted {
                before_turn_id: before_turn_id.to_string(),
                replacement_history: replacement_history.clone(),
            })
            .await?;
        let mut state = self.state();
        state.history = replacement_history;
        // The provider's last count was of the longer history.
        state.reported_context_tokens = None;
        Ok(newest_kept)
    }

    /// Appends items to the model-visible history (persisted first, one line each), so the next
    /// request carries them after everything already there. Refused while a turn runs: items
    /// slipped between a call and its output would break the history the provider accepts.
    pub async fn inject_items(&self, items: Vec<ResponseItem>) -> Result<(), CoreError> {
        self.refuse_while_running("inject items into")?;
        if let Some(rollout) = &self.rollout {
            for item in &items {
                rollout
                    .append(RolloutItem::ResponseItem(item.clone()))
                    .await?;
            }
        }
        self.state().history.extend(items);
        Ok(())
    }

    fn refuse_while_running(&self, action: &str) -> Result<(), CoreError> {
        match self.active_turn_id() {
            Some(turn_id) => Err(CoreError::InvalidInput(format!(
                "thread {} has a running turn ({turn_id}); interrupt it or wait for it to end before you {action} the thread",
                self.id
            ))),
            None => Ok(()),
        }
    }
}

/// The index of the `turn_started` line of `turn_id` when that turn is still part of the
/// thread (not dropped by an earlier revert), and the id of the live turn before it.
fn live_turn_start(items: &[RolloutItem], turn_id: &str) -> Option<(usize, Option<String>)> {
    // (turn id, its start line), in order; a revert truncates it as readers do.
    let mut live: Vec<(&str, usize)> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match item {
            RolloutItem::TurnStarted { turn_id, .. } => live.push((turn_id, index)),
            RolloutItem::HistoryReverted { before_turn_id, .. } => {
                if let Some(at) = live.iter().position(|(id, _)| id == before_turn_id) {
                    live.truncate(at);
                }
            }
            _ => {}
        }
    }
    let at = live.iter().position(|(id, _)| *id == turn_id)?;
    let previous = at.checked_sub(1).map(|before| live[before].0.to_string());
    Some((live[at].1, previous))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(turn_id: &str) -> RolloutItem {
        RolloutItem::TurnStarted {
            turn_id: turn_id.to_string(),
            started_at: 1,
        }
    }

    /// Invariant: a turn dropped by an earlier revert cannot be reverted to again, and a turn
    /// that was never there is not found.
    #[test]
    fn only_turns_still_in_the_thread_are_found() {
        let items = vec![
            started("a"),
            started("b"),
            started("c"),
            RolloutItem::HistoryReverted {
                before_turn_id: "b".into(),
                replacement_history: Vec::new(),
            },
            started("d"),
        ];
        assert_eq!(live_turn_start(&items, "a"), Some((0, None)));
        assert_eq!(live_turn_start(&items, "b"), None);
        assert_eq!(live_turn_start(&items, "c"), None);
        assert_eq!(live_turn_start(&items, "d"), Some((4, Some("a".into()))));
        assert_eq!(live_turn_start(&items, "zz"), None);
    }
}
