//! The connection's running `command/exec` processes that a client may still talk to, by the
//! `processId` the client gave them: their stdin (`command/exec/write`), their PTY
//! (`command/exec/resize`) and their end (`command/exec/terminate`). A process is registered
//! while its request runs and removed when it answers, so an id is free again once its
//! command is over, and never names two running commands at once.
//!
//! `process/spawn` processes use a registry of the same kind (a second one, since handles and
//! process ids are separate names): registered at the spawn, removed just before their
//! `process/exited`, so a handle names one live process at most.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use crate::supervisor::{PtyHandle, TerminalInput};

/// What `command/exec/*` reach of one running command.
#[derive(Clone)]
pub(crate) struct ExecControl {
    /// `None` once closed (`closeStdin`) or when the command has no stdin to write to.
    pub(crate) stdin: Arc<tokio::sync::Mutex<Option<TerminalInput>>>,
    pub(crate) pty: Option<PtyHandle>,
    /// Cancelled to kill the command (`command/exec/terminate`).
    pub(crate) kill: CancellationToken,
}

#[derive(Default)]
pub(crate) struct ExecProcesses {
    running: Mutex<HashMap<String, ExecControl>>,
}

impl ExecProcesses {
    fn running(&self) -> MutexGuard<'_, HashMap<String, ExecControl>> {
        // A panic while it was held leaves a plain map; keep using it.
        self.running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers `process_id`; `false` when a running command already has it.
    pub(crate) fn register(&self, process_id: &str, control: ExecControl) -> bool {
        let mut running = self.running();
        if running.contains_key(process_id) {
            return false;
        }
        running.insert(process_id.to_string(), control);
        true
    }

    pub(crate) fn get(&self, process_id: &str) -> Option<ExecControl> {
        self.running().get(process_id).cloned()
    }

    /// Records the PTY of a registered command, once it runs.
    pub(crate) fn set_pty(&self, process_id: &str, pty: PtyHandle) {
        if let Some(control) = self.running().get_mut(process_id) {
            control.pty = Some(pty);
        }
    }

    /// Kills every command the connection still runs: it closed, and nobody can reach them.
    pub(crate) fn kill_all(&self) {
        for control in self.running().values() {
            control.kill.cancel();
        }
    }

    pub(crate) fn remove(&self, process_id: &str) {
        self.running().remove(process_id);
    }
}
