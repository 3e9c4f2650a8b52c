//! A thread's background terminals as clients see them: the model's commands still running
//! (`exec_command` sessions, whatever turn started them), listed, terminated one by one, or
//! all cleaned away. The sessions themselves are the thread's `Terminals`' (core/tools).
//!
//! A listing reports what each command costs ([`crate::supervisor::usage_of`]: CPU share since
//! it started, resident memory of its processes), read from `/proc` on a blocking thread.

use crate::supervisor::{usage_of, Usage};

use super::thread::Thread;

/// One running command of the thread.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundTerminal {
    pub item_id: String,
    pub process_id: String,
    pub command: String,
    pub cwd: String,
    pub os_pid: Option<u32>,
    /// Percent of one CPU its processes used since it started; `None` when it cannot be read
    /// (the command ended meanwhile).
    pub cpu_percent: Option<f64>,
    /// Resident memory of its processes, in KiB.
    pub rss_kb: Option<u64>,
}

impl Thread {
    /// The thread's running commands, oldest first, with what each costs now.
    pub async fn background_terminals(&self) -> Vec<BackgroundTerminal> {
        let sessions = self.terminals.live();
        let pids: Vec<Option<u32>> = sessions.iter().map(|session| session.os_pid).collect();
        // Reading /proc blocks; a failed blocking task only loses the figures.
        let usages: Vec<Option<Usage>> = tokio::task::spawn_blocking(move || {
            pids.into_iter().map(|pid| pid.and_then(usage_of)).collect()
        })
        .await
        .unwrap_or_default();
        sessions
            .iter()
            .enumerate()
            .map(|(index, session)| {
                let usage = usages.get(index).copied().flatten();
                BackgroundTerminal {
                    item_id: session.item_id.to_string(),
                    process_id: session.id.to_string(),
                    command: session.raw_command.clone(),
                    cwd: session.cwd.clone(),
                    os_pid: session.os_pid,
                    cpu_percent: usage.map(|usage| usage.cpu_percent),
                    rss_kb: usage.map(|usage| usage.rss_kb),
                }
            })
            .collect()
    }

    /// Kills the running command `process_id`; its item completes as failed. `false` when the
    /// thread runs no command of that id (any more).
    pub fn terminate_background_terminal(&self, process_id: &str) -> bool {
        self.terminals.terminate(process_id)
    }

    /// Kills every running command of the thread.
    pub fn clean_background_terminals(&self) {
        self.terminals.clean();
    }
}
