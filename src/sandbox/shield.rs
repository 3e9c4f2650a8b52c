//! What the daemon does to itself so that the commands it confines cannot read or steer it.
//!
//! In namespace mode the daemon is not even visible to a command (its own PID namespace). In the
//! fallback it is: same user, same `/proc`. Marking the daemon not dumpable makes the kernel
//! treat its `/proc/<pid>` entries (`environ`, `mem`, `fd/*`, ...) and ptrace-style access as
//! needing `CAP_SYS_PTRACE`, which no confined command has (capabilities are dropped), so its
//! environment (provider keys) cannot be read from outside. Commands themselves are dumpable
//! again after exec, as usual.

/// Marks the daemon not dumpable. It also means no core dump of the daemon and that a debugger
/// needs root to attach; logged, never fatal, when the kernel refuses.
pub fn shield_daemon() {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        tracing::warn!(
            error = %std::io::Error::last_os_error(),
            "cannot mark the daemon not dumpable; confined commands in the fallback mode may \
             read its /proc entries"
        );
    }
}
