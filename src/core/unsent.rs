//! A new thread whose turns all failed before any request left the process (no API key, a
//! provider that cannot be configured) leaves no rollout behind: its file would hold only a
//! prompt nobody answered, and `thread/list` would show it as if it were a conversation.
//!
//! The thread remembers whether it was started empty here (not resumed, not forked), whether a
//! turn failed that way, and whether any request got further (a stream opened, or the provider
//! answered or could not be reached). Only when it was started here, a turn failed unsent and no
//! request got further is the rollout deleted, when the thread unloads or the daemon stops —
//! until then it is a thread like any other, and a later turn that reaches the provider keeps it.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::client::ClientError;
use crate::rollout::RolloutWriter;

use super::ids::ThreadId;

/// What a thread's requests have done so far, as far as keeping its rollout is concerned.
#[derive(Debug, Default)]
pub(crate) struct ProviderContact {
    started_empty: AtomicBool,
    failed_unsent: AtomicBool,
    reached: AtomicBool,
    /// The rollout was deleted; later closes and flushes have nothing to do.
    discarded: AtomicBool,
}

impl ProviderContact {
    /// The thread was created here with no history (`thread/start`, not resume or fork).
    pub(crate) fn mark_started_empty(&self) {
        self.started_empty.store(true, Ordering::SeqCst);
    }

    /// How an attempt to open a response stream ended.
    pub(crate) fn note_attempt<T>(&self, outcome: &Result<T, ClientError>) {
        match outcome {
            Err(ClientError::MissingApiKey { .. } | ClientError::Config { .. }) => {
                self.failed_unsent.store(true, Ordering::SeqCst)
            }
            _ => self.reached.store(true, Ordering::SeqCst),
        }
    }

    fn never_reached(&self) -> bool {
        self.started_empty.load(Ordering::SeqCst)
            && self.failed_unsent.load(Ordering::SeqCst)
            && !self.reached.load(Ordering::SeqCst)
    }

    /// Deletes the thread's rollout when nothing it did ever left the process (see the module
    /// docs); true when it did, and the rollout is gone.
    pub(crate) async fn discard_rollout_if_never_sent(
        &self,
        rollout: Option<&RolloutWriter>,
        thread_id: &ThreadId,
    ) -> bool {
        let Some(rollout) = rollout else {
            return false;
        };
        if self.discarded.load(Ordering::SeqCst) {
            return true;
        }
        if !self.never_reached() {
            return false;
        }
        match rollout.discard().await {
            Ok(()) => {
                self.discarded.store(true, Ordering::SeqCst);
                tracing::info!(%thread_id, "no request of this thread left the process; its rollout is removed");
                true
            }
            Err(error) => {
                tracing::debug!(%error, "rollout discard");
                false
            }
        }
    }
}
