//! The part that runs in the process about to become the command: the forked child between
//! `fork` and `exec` (fallback mode) or the helper inside the namespaces. Only async-signal-safe
//! work is allowed in the forked child (another daemon thread may have held the allocator's lock
//! at fork time), so this is a few kinds of raw syscall on data built beforehand: no allocation,
//! no locks, no Landlock or seccompiler library code.

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
    /// seccomp, and stops setuid binaries from dropping the rules), no capabilities, then the
    /// Landlock domain, then each seccomp filter. Any failure is returned so the spawn fails: a
    /// command never runs half-confined.
    pub(super) fn apply(&self) -> io::Result<()> {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        drop_capabilities()?;
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

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`; version 3 takes two (capabilities 0–31 and 32–63).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;

/// Leaves the process with no capability and none to regain: the ambient set cleared, the
/// bounding set emptied (which needs `CAP_SETPCAP`; a process without it has no capabilities
/// to lose, and no-new-privs keeps exec from granting any), then every set zeroed. A daemon
/// running as root would otherwise hand its commands every capability: a hostname, the clock,
/// raw sockets, files of any owner.
fn drop_capabilities() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only. EINVAL: a kernel without ambient capabilities
    // (before 4.3) has none to clear.
    let cleared = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    if cleared != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(io::Error::last_os_error());
    }
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: the kernel writes two `CapData` into `data`, which holds two.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if data[0].effective & (1 << CAP_SETPCAP) != 0 {
        for capability in 0..64 {
            // SAFETY: prctl with integer arguments only. EINVAL marks the first capability
            // this kernel does not know: the set is empty past it.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) } != 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(io::Error::last_os_error());
            }
        }
    }
    let empty = [CapData::default(); 2];
    // SAFETY: the kernel reads the header and two `CapData`; dropping capabilities is always
    // allowed.
    if unsafe { libc::syscall(libc::SYS_capset, &header, empty.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
