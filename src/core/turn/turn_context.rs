//! The turn as its own loop sees it: the handle its tools get plus the loop's state. Its own
//! file so that the turn's parts (the loop, sampling, the response module, compaction) share it
//! without importing one another.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::client::TurnState;
use crate::rollout::RolloutItem;
use crate::wire::ResponseItem;

use super::super::thread::{PendingInput, Thread};
use super::super::tools::handle::TurnHandle;

/// Everything one turn's task needs: the handle its tools get, and the turn loop's own state.
/// Cloned into each tool task of the turn (as its [`TurnHandle`]).
#[derive(Clone)]
pub(crate) struct TurnContext {
    /// Turn id, cancellation, event and rollout access: all a tool may touch of the turn.
    pub handle: TurnHandle,
    pub thread: Arc<Thread>,
    pub pending_input: Arc<Mutex<Vec<PendingInput>>>,
    /// Cancelled once this turn's terminal event is out (see `ActiveTurn::finished`).
    pub finished: CancellationToken,
    /// The provider's sticky routing value, echoed on every request of this turn.
    pub provider_turn_state: TurnState,
    /// `turn/start`'s `outputSchema`: constrains this turn's final message, not later turns'.
    pub output_schema: Option<serde_json::Value>,
    /// Set once `model/rerouted` went out: every request of a rerouted turn carries the header,
    /// but the client should hear about it once per turn.
    pub rerouted_announced: Arc<std::sync::atomic::AtomicBool>,
    /// The developer-message section naming the skills on disk, read once when the turn starts
    /// so every request of the turn shows the model the same list.
    pub skills_instructions: Option<String>,
    /// `serviceTierForTurn`: this turn's tier, over the thread's.
    pub service_tier: Option<String>,
    /// `turn/settings/update`: read before each request of the turn, over the thread's settings.
    pub settings_patch: Arc<Mutex<super::super::settings::TurnSettingsPatch>>,
}

/// The turn loop reads the handle's fields (`turn_id`, `cancel`) and calls its `emit` and
/// `persist` as its own: a turn is its tools' handle plus the loop's state.
impl std::ops::Deref for TurnContext {
    type Target = TurnHandle;

    fn deref(&self) -> &TurnHandle {
        &self.handle
    }
}

impl TurnContext {
    /// Records a complete model-visible item: live history first, then the rollout.
    pub(crate) async fn record_history(&self, item: ResponseItem) {
        self.thread.state().history.push(item.clone());
        self.persist(RolloutItem::ResponseItem(item)).await;
    }

    /// The settings this turn's next request uses: the thread's, under what
    /// `turn/settings/update` gave this turn.
    pub(crate) fn request_settings(&self) -> super::super::settings::ThreadSettings {
        let mut settings = self.thread.settings();
        match self.settings_patch.lock() {
            Ok(patch) => patch.apply(&mut settings),
            Err(poisoned) => poisoned.into_inner().apply(&mut settings),
        }
        settings
    }

    pub(super) fn take_pending_input(&self) -> Vec<PendingInput> {
        match self.pending_input.lock() {
            Ok(mut pending) => std::mem::take(&mut *pending),
            Err(_) => Vec::new(),
        }
    }
}
