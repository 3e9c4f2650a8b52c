//! Recording a thread's client-stored metadata (`thread/metadata/update`): one rollout line
//! holding the full new snapshot, through the loaded thread's writer or, for a thread that is
//! not loaded, under its rollout's lock. The index folds the line into the thread's entry.

use crate::rollout::{RolloutItem, StoredThreadMetadata};

use super::error::CoreError;
use super::ids::ThreadId;
use super::manager::ThreadManager;

impl ThreadManager {
    pub async fn record_thread_metadata(
        &self,
        thread_id: &ThreadId,
        metadata: StoredThreadMetadata,
    ) -> Result<(), CoreError> {
        let line = RolloutItem::ThreadMetadata(metadata);
        match self.get(thread_id) {
            Ok(thread) => match &thread.rollout {
                Some(rollout) => Ok(rollout.append(line).await?),
                None => Err(CoreError::NoRollout(thread_id.to_string())),
            },
            Err(_) => self.append_to_persisted_thread(thread_id, line).await,
        }
    }
}
