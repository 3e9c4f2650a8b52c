//! A thread's background terminals as clients see them: the model's commands still running
//! (`exec_command` sessions, whatever turn started them), listed, terminated one by one, or
//! all cleaned away. The sessions themselves are the thread's `Terminals`' (core/tools).

use super::thread::Thread;

/// One running command of the thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundTerminal {
    pub item_id: String,
    pub process_id: String,
    pub command: String,
    pub cwd: String,
    pub os_pid: Option<u32>,
}

impl Thread {
    /// The thread's running commands, oldest first.
    pub fn background_terminals(&self) -> Vec<BackgroundTerminal> {
        self.terminals
            .live()
            .iter()
            .map(|session| BackgroundTerminal {
                item_id: session.item_id.to_string(),
                process_id: session.id.to_string(),
                command: session.raw_command.clone(),
                cwd: session.cwd.clone(),
                os_pid: session.os_pid,
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
