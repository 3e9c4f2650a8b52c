//! The one place where a thread's (or a `command/exec` request's) sandbox settings become the
//! sandbox layer's [`SandboxPolicy`], and where a command's confinement is prepared.
//!
//! Every command the daemon runs for the model or a client goes through [`CommandSandbox`]:
//! `read-only` and `workspace-write` are confined (namespaces where the machine allows them,
//! Landlock + seccomp inside them or alone, see `docs/SANDBOX.md`), `danger-full-access` and an
//! external sandbox are not. When the machine cannot enforce a confining policy,
//! [`CommandSandbox::unsupported`] says why and callers refuse the command: nothing ever runs
//! with less confinement than was asked for. Where only the fallback mode is available,
//! [`CommandSandbox::fallback_gaps`] says what it cannot contain.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tokio_util::sync::CancellationToken;

pub use crate::sandbox::Isolation;
use crate::sandbox::{
    self, IsolationMode, PreparedSandbox, SandboxError, SandboxPolicy, SandboxSetup, WritableArea,
};

use super::settings::{SandboxMode, ThreadSettings};

/// What confines one command: the policy plus the paths it needs, and how it is isolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSandbox {
    policy: SandboxPolicy,
    writable_roots: Vec<PathBuf>,
    protected_paths: Vec<PathBuf>,
    isolation: Isolation,
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
            isolation: Isolation::Auto,
        }
    }

    /// The same sandbox isolated as `isolation` asks (`sandbox_isolation`).
    pub fn with_isolation(mut self, isolation: Isolation) -> CommandSandbox {
        self.isolation = isolation;
        self
    }

    /// The sandbox a thread's commands run under.
    pub fn for_thread(settings: &ThreadSettings) -> CommandSandbox {
        CommandSandbox::new(
            settings.sandbox,
            settings.sandbox_network_access,
            settings.sandbox_writable_roots.clone(),
            settings.protected_paths.clone(),
        )
        .with_isolation(settings.sandbox_isolation)
    }

    /// Whether openturn confines commands under this sandbox.
    pub fn confines(&self) -> bool {
        self.policy.confines()
    }

    /// The policy's name (`read-only`, ...), for messages.
    pub fn name(&self) -> &'static str {
        self.policy.name()
    }

    /// Why this machine cannot enforce the policy, or `None` when it can (always `None` for the
    /// unconfined policies).
    pub fn unsupported(&self) -> Option<String> {
        if !self.policy.confines() {
            return None;
        }
        unsupported_reason(&self.policy).or_else(|| setup(self.isolation).active().err())
    }

    /// What the fallback mode cannot contain under this policy, with why namespaces are not
    /// used, when confined commands run in that mode; `None` in namespace mode (or unconfined).
    pub fn fallback_gaps(&self) -> Option<String> {
        if !self.policy.confines() {
            return None;
        }
        let active = setup(self.isolation).active().ok()?;
        if active.mode != IsolationMode::Fallback {
            return None;
        }
        let why = active.fallback_reason.unwrap_or_default();
        let mut gaps = Vec::new();
        if matches!(self.policy, SandboxPolicy::WorkspaceWrite { .. }) {
            gaps.push(
                "permission bits (other than setuid/setgid), timestamps and extended attributes \
                 of files outside the writable roots can still be changed",
            );
            gaps.push(
                "no new file or directory can be created directly in a repository root (a \
                 build cannot create `target/` or `node_modules/` there)",
            );
        }
        gaps.extend([
            "the private temp dir has no size bound",
            "the names (not the contents) of other commands' temp files can be listed",
            "other processes on the machine are visible (not the daemon's memory or \
             environment)",
        ]);
        Some(format!(
            "commands run in the sandbox's fallback mode (Landlock, seccomp and no \
             capabilities, without namespaces) because {why}. In this mode {}.",
            gaps.join("; ")
        ))
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
            &setup(self.isolation),
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
            isolation: self.isolation,
        }
    }
}

/// The daemon's own binary serves as the helper inside the namespaces.
fn setup(isolation: Isolation) -> SandboxSetup {
    SandboxSetup::new(isolation)
}

/// The mode confined commands run in under `isolation` (`namespaces` or `fallback`), or
/// `unavailable` when namespaces are required and missing; for `config/read` and the log.
pub fn isolation_mode_name(isolation: Isolation) -> &'static str {
    match setup(isolation).active() {
        Ok(active) => active.mode.name(),
        Err(_) => "unavailable",
    }
}

/// Starts deciding the isolation mode, on a thread of its own, and returns at once: the
/// namespace check starts `bwrap` (milliseconds), which must not delay the daemon's answer to
/// `initialize`. Nothing confined can run before the answer is known: every caller of the
/// sandbox's mode waits for the one check in progress (or makes it), and the async paths that
/// lead to a command (a turn's start, `command/exec`, `config/read`) first await
/// [`isolation_decided`], so they never hold an async thread while it runs. A policy the answer
/// says cannot be enforced is refused, never run unconfined.
pub fn probe_isolation(isolation: Isolation) {
    let decided = STARTUP_PROBE.get_or_init(CancellationToken::new).clone();
    let spawned = std::thread::Builder::new()
        .name("openturn-sandbox-probe".into())
        .spawn(move || {
            log_isolation(isolation);
            decided.cancel();
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the sandbox check on its own thread; running it now");
        log_isolation(isolation);
        if let Some(decided) = STARTUP_PROBE.get() {
            decided.cancel();
        }
    }
}

/// Cancelled once the check [`probe_isolation`] started has its answer; unset when the daemon
/// started none (an embedder): the first sandboxed command then makes the check itself.
static STARTUP_PROBE: OnceLock<CancellationToken> = OnceLock::new();

/// Waits until the isolation check started at startup has its answer (at once when there is
/// none, or once it answered).
pub async fn isolation_decided() {
    if let Some(decided) = STARTUP_PROBE.get() {
        decided.cancelled().await;
    }
}

fn log_isolation(isolation: Isolation) {
    match setup(isolation).active() {
        Ok(active) => match active.fallback_reason {
            None => tracing::info!("sandboxed commands run in namespaces (bubblewrap)"),
            Some(reason) => tracing::info!(
                "sandboxed commands run in the fallback mode (no namespaces): {reason}"
            ),
        },
        Err(reason) => tracing::warn!("sandboxed commands will be refused: {reason}"),
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

    #[test]
    fn the_forced_fallback_names_what_it_cannot_contain_per_policy() {
        let sandbox = |mode| {
            CommandSandbox::new(mode, false, Vec::new(), Vec::new())
                .with_isolation(Isolation::Fallback)
        };
        let workspace = sandbox(SandboxMode::WorkspaceWrite)
            .fallback_gaps()
            .unwrap();
        assert!(workspace.contains("sandbox_isolation"), "{workspace}");
        assert!(workspace.contains("repository root"), "{workspace}");
        assert!(workspace.contains("no size bound"), "{workspace}");
        let read_only = sandbox(SandboxMode::ReadOnly).fallback_gaps().unwrap();
        assert!(!read_only.contains("repository root"), "{read_only}");
        assert!(read_only.contains("no size bound"), "{read_only}");
        assert_eq!(sandbox(SandboxMode::DangerFullAccess).fallback_gaps(), None);
    }
}
