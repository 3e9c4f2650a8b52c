//! The sandbox policies openturn can put a command under, named after the reference protocol's
//! sandbox modes (`read-only`, `workspace-write`, `danger-full-access`, `externalSandbox`).

use std::fmt;

/// What a command may touch. The paths a `WorkspaceWrite` command may write are given to
/// [`super::PreparedSandbox::prepare`] (the cwd and the configured writable roots), not here, so
/// one policy value can be reused across working directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SandboxPolicy {
    /// Everything readable; nothing writable except a private temp dir and a few device files.
    ReadOnly {
        /// Whether the command may open internet sockets (TCP, UDP, raw).
        network_access: bool,
    },
    /// As `ReadOnly`, plus the cwd and the writable roots (minus protected paths) are writable.
    WorkspaceWrite {
        /// Whether the command may open internet sockets (TCP, UDP, raw).
        network_access: bool,
    },
    /// No confinement at all: the user asked for it.
    DangerFullAccess,
    /// No confinement by openturn: the user confines the whole daemon (container, VM, ...).
    ExternalSandbox,
}

impl SandboxPolicy {
    /// The policy's name as the protocol spells the sandbox mode, for errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ReadOnly { .. } => "read-only",
            Self::WorkspaceWrite { .. } => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
            Self::ExternalSandbox => "external-sandbox",
        }
    }

    /// Whether openturn itself confines commands under this policy.
    pub fn confines(&self) -> bool {
        matches!(self, Self::ReadOnly { .. } | Self::WorkspaceWrite { .. })
    }

    /// Whether internet sockets are allowed (always, for the unconfined policies).
    pub fn network_access(&self) -> bool {
        match self {
            Self::ReadOnly { network_access } | Self::WorkspaceWrite { network_access } => {
                *network_access
            }
            Self::DangerFullAccess | Self::ExternalSandbox => true,
        }
    }
}

impl fmt::Display for SandboxPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
