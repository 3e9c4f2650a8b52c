//! One resolved run of a command: which shell runs it and how it is shown, where it runs and
//! under which confinement ([`Invocation`]), and the item and tool output that describe it.

use std::path::PathBuf;

use crate::core::ids::ItemId;
use crate::core::items::{ToolItemStatus, TurnItem};
use crate::core::sandboxing::CommandSandbox;
use crate::core::shell_env::ShellEnvironmentPolicy;
use crate::core::tools::handle::TurnHandle;
use crate::core::tools::output::ToolOutput;

/// `/bin/bash -lc 'echo hi'`: the display form of what runs.
pub(crate) fn display_command(shell: &str, login: bool, cmd: &str) -> String {
    let flag = if login { "-lc" } else { "-c" };
    format!("{shell} {flag} '{}'", cmd.replace('\'', r"'\''"))
}

pub(super) fn user_shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|shell| !shell.is_empty())
        .unwrap_or_else(|| "/bin/bash".to_string())
}

/// What one run is about, resolved from the arguments and the thread.
pub(super) struct Invocation {
    pub(super) call_id: ItemId,
    pub(super) shell: String,
    pub(super) login: bool,
    pub(super) cmd: String,
    pub(super) cwd: PathBuf,
    pub(super) display: String,
    pub(super) tty: bool,
    pub(super) yield_time_ms: Option<u64>,
    pub(super) max_output_tokens: Option<u64>,
    /// Told to the model before the command's output.
    pub(super) note: Option<String>,
    /// The confinement it runs under (unconfined when the gate said so).
    pub(super) sandbox: CommandSandbox,
    /// The thread's working directory: what `workspace-write` makes writable, whatever
    /// `workdir` the model picked for the command.
    pub(super) workspace: PathBuf,
    /// What the command's environment is built from.
    pub(super) environment: std::sync::Arc<ShellEnvironmentPolicy>,
}

impl Invocation {
    /// What an "accept for session" approval covers: this command line in this directory, and
    /// run outside the sandbox only if that is what was approved.
    pub(super) fn approval_key(&self) -> (String, PathBuf) {
        let display = if self.sandbox.confines() {
            self.display.clone()
        } else {
            format!("{} [outside the sandbox]", self.display)
        };
        (display, self.cwd.clone())
    }

    pub(super) fn item(&self, status: ToolItemStatus) -> TurnItem {
        self.item_with_process(status, None)
    }

    pub(super) fn item_with_process(
        &self,
        status: ToolItemStatus,
        process_id: Option<u32>,
    ) -> TurnItem {
        TurnItem::CommandExecution {
            id: self.call_id.clone(),
            command: self.display.clone(),
            cwd: self.cwd.display().to_string(),
            status,
            aggregated_output: None,
            exit_code: None,
            duration_ms: None,
            process_id: process_id.map(|pid| pid.to_string()),
            raw_command: self.cmd.clone(),
        }
    }

    pub(super) fn output(&self, text: String) -> ToolOutput {
        ToolOutput {
            call_id: self.call_id.clone(),
            custom: false,
            text,
        }
    }
}

pub(super) async fn emit_item(turn: &TurnHandle, item: &TurnItem, completed: bool) {
    if completed {
        turn.item_completed(item.clone()).await;
    } else {
        turn.item_started(item.clone()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_command_quotes_for_the_shell() {
        assert_eq!(
            display_command("/bin/bash", true, "echo 'hi'"),
            r"/bin/bash -lc 'echo '\''hi'\'''"
        );
    }
}
