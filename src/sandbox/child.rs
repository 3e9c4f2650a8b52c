//! The part that runs in the child between `fork` and `exec`. Only async-signal-safe work is
//! allowed there (another daemon thread may have held the allocator's lock at fork time), so
//! this is three kinds of raw syscall on data built beforehand: no allocation, no locks, no
//! Landlock or seccompiler library code.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::syscalls::Program;

/// A ready Landlock ruleset and compiled seccomp programs. Shared by `Arc` with every
/// `pre_exec` hook it is installed into; the ruleset fd is close-on-exec, so it never leaks
/// into the command.
#[derive(Debug)]
pub(super) struct ChildConfinement {
    pub(super) ruleset: OwnedFd,
    pub(super) programs: Vec<Program>,
}

impl ChildConfinement {
    /// Confines the calling process: no-new-privs (required by both Landlock and unprivileged
    /// seccomp, and stops setuid binaries from dropping the rules), then the Landlock domain,
    /// then each seccomp filter. Any failure is returned so the spawn fails: a command never
    /// runs half-confined.
    pub(super) fn apply(&self) -> io::Result<()> {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the fd is a live Landlock ruleset owned by `self`; flags 0.
        let restricted = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            )
        };
        if restricted != 0 {
            return Err(io::Error::last_os_error());
        }
        for program in &self.programs {
            let Ok(len) = u16::try_from(program.len()) else {
                return Err(io::Error::from_raw_os_error(libc::E2BIG));
            };
            let fprog = libc::sock_fprog {
                len,
                filter: program.as_ptr().cast_mut(),
            };
            // SAFETY: `fprog` points at `program`, which outlives the call; the kernel copies it.
            let loaded = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &fprog as *const libc::sock_fprog,
                )
            };
            if loaded != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
