//! The seccomp-BPF programs a confined command runs under, compiled in the daemon.
//!
//! Landlock confines paths and TCP ports; it cannot see socket families, other processes'
//! memory, or interfaces that bypass syscall filtering. These filters refuse exactly those,
//! returning an errno (never killing) so a command fails the way it would on a locked-down host.
//!
//! Refused with EPERM under every confining policy, and why:
//! - `ptrace`, `process_vm_readv`, `process_vm_writev`: reading or steering another process's
//!   memory is how a confined process would borrow an unconfined one's rights.
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring performs opens, socket
//!   creation and connects without the syscalls this filter inspects.
//! - `unshare`, `setns`, and `clone` with any `CLONE_NEW*` flag: new namespaces (a user
//!   namespace first of all) are the usual first step of a kernel or container escape and no
//!   command needs them.
//! - `mount`, `umount2`, `pivot_root`, `chroot`, `open_tree`, `move_mount`, `fsopen`, `fsmount`,
//!   `fsconfig`, `fspick`, `mount_setattr`: changing what a path points to would change what the
//!   path-based Landlock rules mean (Landlock refuses most of these too; this is a second wall).
//! - `open_by_handle_at`, `name_to_handle_at`: open files by handle, without a path walk.
//! - `bpf`, `perf_event_open`, `userfaultfd`: large kernel attack surface, classic exploit aids.
//! - `keyctl`, `add_key`, `request_key`: the kernel keyring is shared with the user's other
//!   processes and is not covered by Landlock.
//! - `kexec_load`, `kexec_file_load`, `init_module`, `finit_module`, `delete_module`, `reboot`,
//!   `swapon`, `swapoff`, `acct`: whole-machine operations (the daemon may run as root in a
//!   container).
//! - `ioctl(TIOCSTI)`, `ioctl(TIOCLINUX)`: pushing keystrokes into the controlling terminal
//!   would run commands outside the sandbox once the command exits.
//! - with the network off, `socket` for every family but `AF_UNIX`: Landlock's TCP rules do not
//!   cover UDP, raw or netlink sockets, so internet families are refused at creation.
//!
//! `clone3` gets ENOSYS instead (its flags sit in memory a filter cannot read): libc then falls
//! back to `clone`, whose flags the filter checks.

use std::collections::BTreeMap;

use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::error::SandboxError;

/// One compiled filter, in the kernel's instruction layout, ready for `seccomp(2)`.
pub(super) type Program = Vec<libc::sock_filter>;

/// Syscalls refused outright under every confining policy (see the module doc for why).
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
];

/// Every namespace-creating `clone` flag; any one of them set refuses the call.
const CLONE_NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

/// Terminal ioctls that inject input or poke the console.
/// (The request argument is compared as a 32-bit value, which both numbers fit.)
#[allow(
    clippy::unnecessary_cast,
    reason = "libc's ioctl request type is u64 on glibc but c_int on musl"
)]
const REFUSED_IOCTLS: &[u64] = &[libc::TIOCSTI as u64, libc::TIOCLINUX as u64];

/// The programs to load, in order: the EPERM filter, then the `clone3` ENOSYS filter.
pub(super) fn programs(network_access: bool) -> Result<Vec<Program>, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(seccomp_error)?;
    let refused = compile(refused_rules(network_access)?, libc::EPERM, arch)?;
    let clone3 = compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    Ok(vec![refused, clone3])
}

fn refused_rules(network_access: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    // An empty rule list refuses the syscall whatever its arguments.
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        REFUSED.iter().map(|&number| (number, Vec::new())).collect();
    let clone_rules = CLONE_NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = u64::from(flag.unsigned_abs());
            rule(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
        })
        .collect::<Result<_, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    let ioctl_rules = REFUSED_IOCTLS
        .iter()
        .map(|&request| rule(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request))
        .collect::<Result<_, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    if !network_access {
        let not_unix = rule(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX.unsigned_abs().into(),
        )?;
        rules.insert(libc::SYS_socket, vec![not_unix]);
    }
    Ok(rules)
}

fn rule(
    arg_index: u8,
    arg_len: SeccompCmpArgLen,
    operator: SeccompCmpOp,
    value: u64,
) -> Result<SeccompRule, SandboxError> {
    let condition =
        SeccompCondition::new(arg_index, arg_len, operator, value).map_err(seccomp_error)?;
    SeccompRule::new(vec![condition]).map_err(seccomp_error)
}

/// Compiles rules into a filter that returns `errno` on a match and allows everything else.
fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: libc::c_int,
    arch: TargetArch,
) -> Result<Program, SandboxError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno.unsigned_abs()),
        arch,
    )
    .map_err(seccomp_error)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(seccomp_error)?;
    Ok(program
        .into_iter()
        .map(|instruction| libc::sock_filter {
            code: instruction.code,
            jt: instruction.jt,
            jf: instruction.jf,
            k: instruction.k,
        })
        .collect())
}

fn seccomp_error(error: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp {
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_rule_exists_only_when_the_network_is_off() {
        let off = refused_rules(false).unwrap();
        let on = refused_rules(true).unwrap();
        assert!(off.contains_key(&libc::SYS_socket));
        assert!(!on.contains_key(&libc::SYS_socket));
        assert!(off.contains_key(&libc::SYS_ptrace) && on.contains_key(&libc::SYS_ptrace));
    }

    #[test]
    fn both_programs_compile_for_this_architecture() {
        let programs = programs(false).unwrap();
        assert_eq!(programs.len(), 2);
        // A kernel refuses programs longer than BPF_MAXINSNS (4096) instructions.
        assert!(programs.iter().all(|p| !p.is_empty() && p.len() < 4096));
    }
}
