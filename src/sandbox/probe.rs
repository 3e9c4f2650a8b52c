//! What this kernel can enforce: the Landlock ABI version and whether seccomp filters can be
//! loaded. Asked once per `prepare` (two cheap syscalls), so a kernel change between commands
//! can never leave a stale "supported" answer.

use super::error::SandboxError;
use super::policy::SandboxPolicy;

/// The oldest Landlock ABI openturn accepts for a confining policy. ABI 1 and 2 do not handle
/// `truncate(2)`, so a "read-only" file could still be emptied; ABI 3 (Linux 6.2) closes that.
pub const MIN_LANDLOCK_ABI: i32 = 3;

/// The first Landlock ABI with TCP bind/connect rules (Linux 6.7).
pub(super) const LANDLOCK_TCP_ABI: i32 = 4;

/// The first Landlock ABI with signal and abstract-socket scoping (Linux 6.12).
pub(super) const LANDLOCK_SCOPE_ABI: i32 = 6;

/// What the running kernel offers the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxSupport {
    /// The Landlock ABI version, 0 when Landlock is missing or disabled at boot.
    pub landlock_abi: i32,
    /// Whether seccomp-BPF filters returning an errno can be installed.
    pub seccomp_filter: bool,
    /// Whether seccompiler knows this CPU architecture (x86_64, aarch64, riscv64).
    pub seccomp_arch: bool,
}

/// Asks the kernel what it supports.
pub fn probe() -> SandboxSupport {
    SandboxSupport {
        landlock_abi: landlock_abi(),
        seccomp_filter: seccomp_errno_available(),
        seccomp_arch: seccompiler::TargetArch::try_from(std::env::consts::ARCH).is_ok(),
    }
}

impl SandboxSupport {
    /// Whether Landlock also confines TCP bind and connect (defence in depth: seccomp already
    /// refuses internet sockets when the network is off).
    pub fn landlock_tcp(&self) -> bool {
        self.landlock_abi >= LANDLOCK_TCP_ABI
    }

    /// `Ok` when `policy` can be enforced completely, else `Unsupported` saying what is missing.
    pub fn check(&self, policy: &SandboxPolicy) -> Result<(), SandboxError> {
        if !policy.confines() {
            return Ok(());
        }
        let missing = if self.landlock_abi <= 0 {
            "Landlock is not available (kernel older than 5.13, or not enabled at boot: add \
             `landlock` to the `lsm=` kernel parameter)"
                .to_string()
        } else if self.landlock_abi < MIN_LANDLOCK_ABI {
            format!(
                "Landlock ABI {} is older than {MIN_LANDLOCK_ABI} (Linux 6.2), which cannot stop \
                 truncate(2) on read-only files",
                self.landlock_abi
            )
        } else if !self.seccomp_arch {
            format!(
                "seccomp filters are not built for the `{}` architecture",
                std::env::consts::ARCH
            )
        } else if !self.seccomp_filter {
            "seccomp filters are not available (kernel built without CONFIG_SECCOMP_FILTER)"
                .to_string()
        } else {
            return Ok(());
        };
        Err(SandboxError::Unsupported {
            policy: policy.name(),
            reason: missing,
        })
    }

    /// The policies this kernel can enforce, by name.
    pub fn enforceable_policies(&self) -> Vec<&'static str> {
        [
            SandboxPolicy::ReadOnly {
                network_access: false,
            },
            SandboxPolicy::WorkspaceWrite {
                network_access: false,
            },
            SandboxPolicy::DangerFullAccess,
            SandboxPolicy::ExternalSandbox,
        ]
        .iter()
        .filter(|policy| self.check(policy).is_ok())
        .map(SandboxPolicy::name)
        .collect()
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` returns the ABI version.
fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer and size 0 the kernel reads no memory; it returns the
    // version or -1 (ENOSYS / EOPNOTSUPP).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).unwrap_or(0).max(0)
}

/// `seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &SECCOMP_RET_ERRNO)` is 0 when errno-returning filters
/// work (Linux 4.14+).
fn seccomp_errno_available() -> bool {
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    let action: u32 = SECCOMP_RET_ERRNO;
    // SAFETY: the kernel reads one u32 from a valid pointer and changes nothing.
    let result = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0u32,
            &action as *const u32,
        )
    };
    result == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn support(landlock_abi: i32) -> SandboxSupport {
        SandboxSupport {
            landlock_abi,
            seccomp_filter: true,
            seccomp_arch: true,
        }
    }

    #[test]
    fn an_old_landlock_refuses_confinement_but_not_full_access() {
        let old = support(2);
        let error = old
            .check(&SandboxPolicy::ReadOnly {
                network_access: false,
            })
            .unwrap_err();
        assert!(
            matches!(&error, SandboxError::Unsupported { policy: "read-only", reason } if reason.contains("truncate")),
            "{error}"
        );
        assert_eq!(
            old.enforceable_policies(),
            vec!["danger-full-access", "external-sandbox"]
        );
        assert!(support(3)
            .check(&SandboxPolicy::WorkspaceWrite {
                network_access: true
            })
            .is_ok());
    }

    #[test]
    fn missing_seccomp_refuses_confinement() {
        let no_seccomp = SandboxSupport {
            seccomp_filter: false,
            ..support(7)
        };
        let error = no_seccomp
            .check(&SandboxPolicy::WorkspaceWrite {
                network_access: false,
            })
            .unwrap_err();
        assert!(error.to_string().contains("seccomp"), "{error}");
    }

    #[test]
    fn this_kernel_reports_a_landlock_version() {
        // The project's machines run Linux with Landlock; a probe answering 0 here means the
        // syscall plumbing is wrong, not that the kernel lacks it.
        let found = probe();
        assert!(found.landlock_abi >= 1, "{found:?}");
        assert!(found.seccomp_filter, "{found:?}");
    }
}
