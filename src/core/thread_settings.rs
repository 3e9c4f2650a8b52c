//! Changing a live thread's settings between or during turns: `thread/settings/update` (the
//! thread's settings for every later request, recorded in the rollout at once so a resume after
//! a restart uses them) and `turn/settings/update` (the running turn's later requests only).
//! The precedence of what changes is decided in `settings.rs`; this file applies and records.

use std::sync::Arc;

use super::error::CoreError;
use super::ids::TurnId;
use super::record;
use super::settings::{SettingsOverrides, ThreadSettings, TurnSettingsPatch};
use super::thread::Thread;

/// What `turn/settings/update` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnSettingsUpdate {
    /// The turn runs and will send its next request with the change.
    Applied,
    /// The turn ended (or is ending and sends nothing more), or never ran on this thread.
    TargetUnavailable,
}

impl Thread {
    /// Applies `overrides` to the thread's settings and records the new snapshot in the rollout
    /// before answering, so a daemon restart resumes the thread with them. Returns the settings
    /// now in force.
    pub async fn update_thread_settings(
        self: &Arc<Self>,
        overrides: SettingsOverrides,
    ) -> Result<ThreadSettings, CoreError> {
        self.update_settings(|settings| settings.apply_overrides(overrides));
        if let Some(changed) = self.take_settings_change() {
            if let Some(rollout) = &self.rollout {
                rollout.append(record::settings_changed(&changed)).await?;
            }
        }
        Ok(self.settings())
    }

    /// Hands `patch` to the running turn `turn_id`, whose next request uses it; the thread's own
    /// settings do not change.
    pub fn update_turn_settings(
        &self,
        turn_id: &TurnId,
        patch: TurnSettingsPatch,
    ) -> TurnSettingsUpdate {
        let state = self.state();
        let Some(active) = state
            .active
            .as_ref()
            .filter(|active| active.turn_id == *turn_id && !active.closing)
        else {
            return TurnSettingsUpdate::TargetUnavailable;
        };
        match active.settings_patch.lock() {
            Ok(mut current) => current.merge(patch),
            Err(poisoned) => poisoned.into_inner().merge(patch),
        }
        TurnSettingsUpdate::Applied
    }
}
