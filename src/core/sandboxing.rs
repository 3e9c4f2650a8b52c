//! The one place where a thread's (or a `command/exec` request's) sandbox settings become the
//! sandbox layer's [`SandboxPolicy`], and where a command's confinement is prepared.
//!
//! Every command the daemon runs for the model or a client goes through [`CommandSandbox`]:
//! `read-only` and `workspace-write` are confined (Landlock + seccomp, see `docs/SANDBOX.md`),
//! `danger-full-access` and an external sandbox are not. When the kernel cannot enforce a
//! confining policy, [`CommandSandbox::unsupported`] says why and callers refuse the command:
//! nothing ever runs with less confinement than was asked for.

use std::path::{Path, PathBuf};

use crate::sandbox::{self, PreparedSandbox, SandboxError, SandboxPolicy, WritableArea};

use super::settings::{SandboxMode, ThreadSettings};

/// What confines one command: the policy plus the paths it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSandbox {
    policy: SandboxPolicy,
    writable_roots: Vec<PathBuf>,
    protected_paths: Vec<PathBuf>,
}

impl CommandSandbox {
    /// A sandbox for `mode`. `writable_roots` widen `workspace-write` beyond the command's cwd;
    /// `protected_paths` (openturn's home) stay unwritable even inside them.
    pub fn new(
        mode: SandboxMode,
        network_access: bool,
        writable_roots: Vec<PathBuf>,
        protected_paths: Vec<PathBuf>,
    ) -> CommandSandbox {
        CommandSandbox {
            policy: policy_for(mode, network_access),
            writable_roots,
            protected_paths,
        }
    }

    /// The sandbox a thread's commands run under.
    pub fn for_thread(settings: &ThreadSettings) -> CommandSandbox {
        CommandSandbox::new(
            settings.sandbox,
            settings.sandbox_network_access,
            settings.sandbox_writable_roots.clone(),
            settings.protected_paths.clone(),
        )
    }

    /// Whether openturn confines commands under this sandbox.
    pub fn confines(&self) -> bool {
        self.policy.confines()
    }

    /// The policy's name (`read-only`, ...), for messages.
    pub fn name(&self) -> &'static str {
        self.policy.name()
    }

    /// Why this kernel cannot enforce the policy, or `None` when it can (always `None` for the
    /// unconfined policies).
    pub fn unsupported(&self) -> Option<String> {
        unsupported_reason(&self.policy)
    }

    /// Builds the confinement for a command running in `cwd`. Writable roots that do not exist
    /// (or are not directories) are left out rather than failing every command: they grant
    /// nothing that could be used anyway.
    pub fn prepare(&self, cwd: &Path) -> Result<PreparedSandbox, SandboxError> {
        PreparedSandbox::prepare(
            self.policy.clone(),
            cwd,
            &self.usable_roots(),
            &self.protected_paths,
        )
    }

    /// What a command in `cwd` could write under this sandbox, for writes the daemon makes
    /// itself on the model's behalf (`apply_patch`): the same roots and protected paths
    /// [`Self::prepare`] confines commands to.
    pub fn writable_area(&self, cwd: &Path) -> Result<WritableArea, SandboxError> {
        WritableArea::new(
            &self.policy,
            cwd,
            &self.usable_roots(),
            &self.protected_paths,
        )
    }

    fn usable_roots(&self) -> Vec<PathBuf> {
        self.writable_roots
            .iter()
            .filter(|root| root.is_absolute() && root.is_dir())
            .cloned()
            .collect()
    }

    /// The same sandbox without confinement, for a command the user approved to run outside it.
    pub fn unconfined(&self) -> CommandSandbox {
        CommandSandbox {
            policy: SandboxPolicy::DangerFullAccess,
            writable_roots: Vec::new(),
            protected_paths: Vec::new(),
        }
    }
}

/// The mapping from a sandbox mode to the sandbox layer's policy. An external sandbox arrives
/// here as `DangerFullAccess` (the protocol layer maps it so): openturn confines nothing in it.
fn policy_for(mode: SandboxMode, network_access: bool) -> SandboxPolicy {
    match mode {
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly { network_access },
        SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite { network_access },
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
    }
}

fn unsupported_reason(policy: &SandboxPolicy) -> Option<String> {
    match sandbox::probe().check(policy) {
        Ok(()) => None,
        Err(SandboxError::Unsupported { reason, .. }) => Some(reason),
        Err(other) => Some(other.to_string()),
    }
}

/// Why this kernel cannot enforce `mode` (for the configuration checker), or `None`.
pub fn unsupported_mode_reason(mode: SandboxMode) -> Option<String> {
    unsupported_reason(&policy_for(mode, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_only_and_workspace_write_confine() {
        let sandbox = |mode| CommandSandbox::new(mode, false, Vec::new(), Vec::new());
        assert!(sandbox(SandboxMode::ReadOnly).confines());
        assert!(sandbox(SandboxMode::WorkspaceWrite).confines());
        assert!(!sandbox(SandboxMode::DangerFullAccess).confines());
        assert!(!sandbox(SandboxMode::ReadOnly).unconfined().confines());
        assert_eq!(
            policy_for(SandboxMode::WorkspaceWrite, true),
            SandboxPolicy::WorkspaceWrite {
                network_access: true
            }
        );
    }
}
