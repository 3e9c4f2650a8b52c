//! The seccomp-BPF programs a confined command runs under, compiled where the command is set up
//! (in the daemon for the fallback, in the helper inside the namespaces).
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
//! - with the network off, `socket` for every family, `AF_UNIX` included: Landlock's TCP rules
//!   do not cover UDP, raw or netlink sockets, and a pathname UNIX socket outside the workspace
//!   (a tmux server, Docker, systemd) runs commands unconfined for whoever connects. A read-only
//!   mount does not stop `connect` on a socket and the filter cannot see its path, so no new
//!   socket is the only complete answer; `socketpair` stays (it reaches nobody else).
//!
//! In the fallback mode (no namespaces) the filter also refuses what the mounts and the PID
//! namespace would have stopped, as far as a filter can tell from the arguments:
//! - metadata changes: under `read-only` every `chmod`, `chown`, `setxattr`/`removexattr` and
//!   `utimensat` family call (the filter cannot see paths, so the private temp dir is covered
//!   too); under `workspace-write` only setting the setuid or setgid bit, since a mode is an
//!   argument while the path is not; and under both `ioctl(FS_IOC_SETFLAGS)` and
//!   `ioctl(FS_IOC_FSSETXATTR)` (`chattr`).
//! - other processes' limits and scheduling: `prlimit64`, `sched_setaffinity`,
//!   `sched_setscheduler`, `sched_setparam` and `sched_setattr` unless the pid is 0 (the caller),
//!   `setpriority` and `ioprio_set` unless they name the caller (`PRIO_PROCESS` or
//!   `IOPRIO_WHO_PROCESS` with id 0). A command naming itself by its own pid is refused too:
//!   the filter can compare a number with 0, not with the caller's pid.
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

/// `fchmodat2` and the `*xattrat` syscalls: their numbers are the same on every architecture
/// (they came after the syscall tables were unified) but not in every libc release.
const SYS_FCHMODAT2: i64 = 452;
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

/// `chattr`'s ioctls: `FS_IOC_SETFLAGS` (and its 32-bit twin) and `FS_IOC_FSSETXATTR`.
const SET_FLAGS_IOCTLS: &[u64] = &[0x4008_6602, 0x4004_6602, 0x401c_5820];

/// Which calls the filter refuses besides the fixed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Refusals {
    pub(super) network_access: bool,
    pub(super) metadata: Metadata,
    /// Refuse limits and scheduling changes aimed at any process but the caller.
    pub(super) other_processes: bool,
}

/// Which metadata changes are refused (fallback mode only: in namespace mode the read-only
/// mounts refuse them by path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Metadata {
    Allowed,
    /// Setting setuid/setgid bits, and `chattr`.
    NoSetId,
    /// Every mode, owner, xattr and timestamp change, and `chattr`.
    Refused,
}

impl Refusals {
    /// Inside the namespaces: the mounts and the PID namespace cover metadata and the daemon.
    pub(super) fn inside_namespaces(network_access: bool) -> Refusals {
        Refusals {
            network_access,
            metadata: Metadata::Allowed,
            other_processes: false,
        }
    }

    /// The fallback: everything a filter can decide from the arguments.
    pub(super) fn fallback(network_access: bool, read_only: bool) -> Refusals {
        Refusals {
            network_access,
            metadata: if read_only {
                Metadata::Refused
            } else {
                Metadata::NoSetId
            },
            other_processes: true,
        }
    }
}

/// The programs to load, in order: the EPERM filter, then the `clone3` ENOSYS filter.
pub(super) fn programs(refusals: &Refusals) -> Result<Vec<Program>, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(seccomp_error)?;
    let refused = compile(refused_rules(refusals)?, libc::EPERM, arch)?;
    let clone3 = compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    Ok(vec![refused, clone3])
}

/// Rules by syscall: `None` refuses the call whatever its arguments, `Some(rules)` when any
/// rule matches.
#[derive(Default)]
struct RuleSet(BTreeMap<i64, Option<Vec<SeccompRule>>>);

impl RuleSet {
    fn always(&mut self, number: i64) {
        self.0.insert(number, None);
    }

    fn when(&mut self, number: i64, rule: SeccompRule) {
        if let Some(rules) = self.0.entry(number).or_insert_with(|| Some(Vec::new())) {
            rules.push(rule);
        }
    }

    /// Refuses `number` when argument `arg` (a pid or id) is not 0.
    fn unless_zero(&mut self, number: i64, arg: u8) -> Result<(), SandboxError> {
        self.when(
            number,
            rule(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)?,
        );
        Ok(())
    }

    fn into_map(self) -> BTreeMap<i64, Vec<SeccompRule>> {
        // An empty rule list refuses the syscall whatever its arguments.
        self.0
            .into_iter()
            .map(|(number, rules)| (number, rules.unwrap_or_default()))
            .collect()
    }
}

fn refused_rules(refusals: &Refusals) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let mut rules = RuleSet::default();
    for &number in REFUSED {
        rules.always(number);
    }
    for &flag in CLONE_NAMESPACE_FLAGS {
        let flag = u64::from(flag.unsigned_abs());
        let set = rule(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?;
        rules.when(libc::SYS_clone, set);
    }
    for &request in REFUSED_IOCTLS {
        let matches = rule(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)?;
        rules.when(libc::SYS_ioctl, matches);
    }
    if !refusals.network_access {
        rules.always(libc::SYS_socket);
    }
    metadata_rules(&mut rules, refusals.metadata)?;
    if refusals.other_processes {
        for number in [
            libc::SYS_prlimit64,
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
        ] {
            rules.unless_zero(number, 0)?;
        }
        // (which, who): only (PRIO_PROCESS = 0, 0) and (IOPRIO_WHO_PROCESS = 1, 0) name the
        // caller; a process group or a user would reach the daemon.
        rules.unless_zero(libc::SYS_setpriority, 0)?;
        rules.unless_zero(libc::SYS_setpriority, 1)?;
        let not_process = rule(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 1)?;
        rules.when(libc::SYS_ioprio_set, not_process);
        rules.unless_zero(libc::SYS_ioprio_set, 1)?;
    }
    Ok(rules.into_map())
}

fn metadata_rules(rules: &mut RuleSet, metadata: Metadata) -> Result<(), SandboxError> {
    if metadata == Metadata::Allowed {
        return Ok(());
    }
    for &request in SET_FLAGS_IOCTLS {
        let matches = rule(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)?;
        rules.when(libc::SYS_ioctl, matches);
    }
    // (syscall, index of its mode argument)
    let mut chmods = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (SYS_FCHMODAT2, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    chmods.push((libc::SYS_chmod, 1));
    if metadata == Metadata::NoSetId {
        let set_id = [u64::from(libc::S_ISUID), u64::from(libc::S_ISGID)];
        for (number, mode_arg) in chmods {
            for bit in set_id {
                let sets = rule(
                    mode_arg,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(bit),
                    bit,
                )?;
                rules.when(number, sets);
            }
        }
        return Ok(());
    }
    let mut refused = vec![
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        SYS_SETXATTRAT,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_REMOVEXATTRAT,
        libc::SYS_utimensat,
    ];
    refused.extend(chmods.into_iter().map(|(number, _)| number));
    #[cfg(target_arch = "x86_64")]
    refused.extend([
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    for number in refused {
        rules.always(number);
    }
    Ok(())
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
        let off = refused_rules(&Refusals::inside_namespaces(false)).unwrap();
        let on = refused_rules(&Refusals::inside_namespaces(true)).unwrap();
        assert_eq!(
            off.get(&libc::SYS_socket).map(Vec::len),
            Some(0),
            "every socket"
        );
        assert!(!on.contains_key(&libc::SYS_socket));
        assert!(off.contains_key(&libc::SYS_ptrace) && on.contains_key(&libc::SYS_ptrace));
    }

    #[test]
    fn the_fallback_refuses_metadata_by_policy_and_other_processes_always() {
        let read_only = refused_rules(&Refusals::fallback(true, true)).unwrap();
        let workspace = refused_rules(&Refusals::fallback(true, false)).unwrap();
        let namespaces = refused_rules(&Refusals::inside_namespaces(true)).unwrap();
        assert_eq!(read_only.get(&libc::SYS_fchmodat).map(Vec::len), Some(0));
        assert_eq!(read_only.get(&libc::SYS_utimensat).map(Vec::len), Some(0));
        assert_eq!(
            workspace.get(&libc::SYS_fchmodat).map(Vec::len),
            Some(2),
            "setuid and setgid only"
        );
        assert!(!workspace.contains_key(&libc::SYS_utimensat));
        assert!(!namespaces.contains_key(&libc::SYS_fchmodat));
        for rules in [&read_only, &workspace] {
            assert_eq!(rules.get(&libc::SYS_prlimit64).map(Vec::len), Some(1));
            assert_eq!(rules.get(&libc::SYS_setpriority).map(Vec::len), Some(2));
            // TIOCSTI, TIOCLINUX and the three chattr requests.
            assert_eq!(rules.get(&libc::SYS_ioctl).map(Vec::len), Some(5));
        }
        assert!(!namespaces.contains_key(&libc::SYS_prlimit64));
    }

    #[test]
    fn both_programs_compile_for_this_architecture() {
        for refusals in [
            Refusals::fallback(false, true),
            Refusals::fallback(true, false),
            Refusals::inside_namespaces(false),
        ] {
            let programs = programs(&refusals).unwrap();
            assert_eq!(programs.len(), 2);
            // A kernel refuses programs longer than BPF_MAXINSNS (4096) instructions.
            assert!(programs.iter().all(|p| !p.is_empty() && p.len() < 4096));
        }
    }
}
