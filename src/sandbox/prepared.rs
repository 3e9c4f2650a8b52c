//! A sandbox built in the daemon for one command, and the one hook that turns it into the
//! process to spawn: [`PreparedSandbox::command`] builds the `tokio::process::Command` (the
//! program itself under the fallback, `bwrap` and the helper in front of it in namespace mode).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::bwrap::{self, Bind};
use super::child::ChildConfinement;
use super::error::SandboxError;
use super::filesystem::{self, Grants};
use super::inner::{InnerSpec, INNER_ARG};
use super::isolation::{IsolationMode, Launcher, SandboxSetup};
use super::policy::SandboxPolicy;
use super::private_tmp::PrivateTmp;
use super::probe;
use super::syscalls::{self, Refusals};
use super::writable::WritableArea;

/// The confinement for one command. Keep it alive until the command has exited: in the
/// fallback, dropping it removes the private temp dir (`TMPDIR`) the command may still use.
#[derive(Debug)]
pub struct PreparedSandbox {
    policy: SandboxPolicy,
    launch: Launch,
}

#[derive(Debug)]
enum Launch {
    /// The unconfined policies.
    Direct,
    /// Landlock, seccomp and no capabilities, installed between fork and exec.
    Fallback {
        confinement: Arc<ChildConfinement>,
        private_tmp: PrivateTmp,
    },
    /// `bwrap`, then the helper, then the command.
    Namespaces {
        launcher: Launcher,
        network_access: bool,
        binds: Vec<Bind>,
        inner: InnerSpec,
    },
}

impl PreparedSandbox {
    /// Builds everything `policy` needs, in the daemon.
    ///
    /// - `cwd`: the workspace (writable under `WorkspaceWrite`).
    /// - `writable_roots`: further directories writable under `WorkspaceWrite`; ignored by the
    ///   other policies.
    /// - `protected_paths`: paths that stay read-only even inside a writable root (openturn's
    ///   home, say); every `.git` beneath a writable root is added automatically.
    /// - `setup`: namespaces or the fallback (see [`SandboxSetup::active`]).
    ///
    /// Every path must be absolute; `cwd` and each writable root must be existing directories.
    /// A confining policy this machine cannot enforce completely is `Unsupported`.
    pub fn prepare(
        policy: SandboxPolicy,
        cwd: &Path,
        writable_roots: &[PathBuf],
        protected_paths: &[PathBuf],
        setup: &SandboxSetup,
    ) -> Result<Self, SandboxError> {
        if !policy.confines() {
            return Ok(Self {
                policy,
                launch: Launch::Direct,
            });
        }
        // Landlock and seccomp are the inner layer in both modes.
        probe::probe().check(&policy)?;
        let active = setup.active().map_err(|reason| SandboxError::Unsupported {
            policy: policy.name(),
            reason,
        })?;
        // The same area in-process writers consult, so they and commands agree on what is writable.
        let area = WritableArea::new(&policy, cwd, writable_roots, protected_paths)?;
        let launch = match active.launcher {
            Some(launcher) => namespaces(&policy, &area, launcher),
            None => fallback(&policy, &area)?,
        };
        Ok(Self { policy, launch })
    }

    /// The policy this sandbox enforces.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// How the command will be isolated; `None` for the unconfined policies.
    pub fn mode(&self) -> Option<IsolationMode> {
        match &self.launch {
            Launch::Direct => None,
            Launch::Fallback { .. } => Some(IsolationMode::Fallback),
            Launch::Namespaces { .. } => Some(IsolationMode::Namespaces),
        }
    }

    /// The command's private temp dir on the host (fallback only: in namespace mode the command's
    /// `/tmp` exists only inside its mount namespace).
    pub fn private_tmp(&self) -> Option<&Path> {
        match &self.launch {
            Launch::Fallback { private_tmp, .. } => Some(private_tmp.path()),
            Launch::Direct | Launch::Namespaces { .. } => None,
        }
    }

    /// The process to spawn for `program args` in `cwd` with exactly the environment `env`
    /// (nothing else of the daemon's is inherited), confined by this sandbox once [`Self::install`]
    /// has added its hook. The caller adds stdio and spawns it (through the supervisor, whose own
    /// hooks must run before the confinement's); a confinement failure fails the spawn (fallback)
    /// or exits 126 before the program runs (namespaces), so the command never runs unconfined.
    ///
    /// `TMPDIR` is set to the private temp dir for the confining policies.
    pub fn command<I, K, V>(
        &self,
        program: impl AsRef<OsStr>,
        args: &[impl AsRef<OsStr>],
        cwd: &Path,
        env: I,
    ) -> tokio::process::Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut command = match &self.launch {
            Launch::Direct => {
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                command
            }
            Launch::Fallback { .. } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                command
            }
            Launch::Namespaces {
                launcher,
                network_access,
                binds,
                inner,
            } => {
                let mut command = tokio::process::Command::new(&launcher.bwrap);
                command
                    .args(bwrap_args(launcher, *network_access, binds, inner, cwd))
                    .arg(program.as_ref())
                    .args(args);
                command
            }
        };
        // In namespace mode this is bwrap's own cwd too, so a missing directory fails the spawn
        // as it does for a direct command.
        command.current_dir(cwd).env_clear().envs(env);
        match &self.launch {
            Launch::Direct => {}
            Launch::Fallback { private_tmp, .. } => {
                command.env("TMPDIR", private_tmp.path());
            }
            Launch::Namespaces { .. } => {
                command.env("TMPDIR", "/tmp");
            }
        }
        command
    }

    /// Adds the confinement that runs in the child between fork and exec (the fallback's
    /// Landlock, seccomp and capability drop). Nothing for the namespace launch, whose helper
    /// confines itself inside bwrap, nor for the unconfined policies. Call it last: a hook added
    /// after it would run confined, and the supervisor's (joining the command's cgroup) must not.
    pub fn install(&self, command: &mut tokio::process::Command) {
        if let Launch::Fallback { confinement, .. } = &self.launch {
            let confinement = confinement.clone();
            // SAFETY: the hook only runs `ChildConfinement::apply`, which is async-signal-safe.
            unsafe {
                command.pre_exec(move || confinement.apply());
            }
        }
    }
}

/// The namespace launch: the writable roots bound read-write, every existing protected path
/// inside one bound read-only over it, the rest handed to the helper's Landlock ruleset.
fn namespaces(policy: &SandboxPolicy, area: &WritableArea, launcher: Launcher) -> Launch {
    let (roots, protected) = area.parts();
    // A root inside a protected path gets nothing (as in the Landlock plan).
    let roots: Vec<&PathBuf> = roots
        .iter()
        .filter(|root| !protected.iter().any(|p| root.starts_with(p)))
        .collect();
    let inside_root = |path: &Path| roots.iter().any(|root| path.starts_with(root));
    let mut binds: Vec<Bind> = roots.iter().map(|root| Bind::writable(root)).collect();
    let mut missing = Vec::new();
    for path in protected.iter().filter(|path| inside_root(path)) {
        match path.symlink_metadata() {
            // A link is the link's own business: its target, when inside a root, is protected
            // by its own entry (see `WritableArea`).
            Ok(metadata) if metadata.file_type().is_symlink() => {}
            Ok(_) => binds.push(Bind::read_only(path)),
            // Nothing to mount over: Landlock inside keeps it from being created.
            Err(_) => missing.push(path.clone()),
        }
    }
    let mut writable: Vec<PathBuf> = vec![PathBuf::from("/tmp")];
    writable.extend(roots.iter().map(|root| (*root).clone()));
    Launch::Namespaces {
        launcher,
        network_access: policy.network_access(),
        binds,
        inner: InnerSpec {
            network_access: policy.network_access(),
            writable,
            protected: missing,
        },
    }
}

/// The fallback: a private temp dir on the host, the Landlock ruleset and the seccomp filter,
/// built here and applied between fork and exec.
fn fallback(policy: &SandboxPolicy, area: &WritableArea) -> Result<Launch, SandboxError> {
    let private_tmp = PrivateTmp::create()?;
    let (roots, protected) = area.parts();
    let unreadable = [private_tmp.base().to_path_buf()];
    let grants = Grants {
        policy: policy.name(),
        writable_roots: roots,
        protected,
        own_tmp: Some(private_tmp.path()),
        unreadable: &unreadable,
    };
    let network_access = policy.network_access();
    let ruleset = filesystem::ruleset(probe::probe().landlock_abi, network_access, &grants)?;
    let read_only = matches!(policy, SandboxPolicy::ReadOnly { .. });
    let programs = syscalls::programs(&Refusals::fallback(network_access, read_only))?;
    Ok(Launch::Fallback {
        confinement: Arc::new(ChildConfinement { ruleset, programs }),
        private_tmp,
    })
}

/// `bwrap` flags and mounts, then the helper with its spec, up to the program.
fn bwrap_args(
    launcher: &Launcher,
    network_access: bool,
    binds: &[Bind],
    inner: &InnerSpec,
    cwd: &Path,
) -> Vec<OsString> {
    let mut binds = binds.to_vec();
    let writable_covers = |path: &Path| {
        binds
            .iter()
            .any(|bind| bind.writable && path.starts_with(&bind.path))
    };
    // The cwd and the helper must be seen even where the private /tmp would hide them.
    let mut extra = Vec::new();
    for path in [cwd, launcher.helper.as_path()] {
        if bwrap::hidden_by_own_mounts(path) && !writable_covers(path) {
            extra.push(Bind::read_only(path));
        }
    }
    binds.extend(extra);
    let mut args = bwrap::namespace_flags(network_access);
    args.extend(bwrap::mounts(&binds));
    args.push("--chdir".into());
    args.push(cwd.as_os_str().to_os_string());
    args.push("--".into());
    args.push(launcher.helper.clone().into_os_string());
    args.push(INNER_ARG.into());
    args.extend(inner.flags());
    args.push("--".into());
    args
}

#[cfg(test)]
mod tests {
    use super::super::isolation::Isolation;
    use super::super::writable::resolve_protected;
    use super::*;

    fn fallback_setup() -> SandboxSetup {
        SandboxSetup::new(Isolation::Fallback)
    }

    #[test]
    fn relative_and_missing_paths_are_named_in_the_error() {
        let policy = SandboxPolicy::WorkspaceWrite {
            network_access: false,
        };
        let error = PreparedSandbox::prepare(
            policy.clone(),
            Path::new("rel"),
            &[],
            &[],
            &fallback_setup(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "sandbox path `rel`: must be an absolute path"
        );
        let error = PreparedSandbox::prepare(
            policy,
            Path::new("/"),
            &[PathBuf::from("/definitely/not/here")],
            &[],
            &fallback_setup(),
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("sandbox path `/definitely/not/here`: cannot be resolved"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_protected_path_resolves_through_its_existing_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = dir.path().canonicalize().unwrap();
        assert_eq!(
            resolve_protected(&dir.path().join("a/b")).unwrap(),
            canonical.join("a/b")
        );
    }

    #[test]
    fn unconfined_policies_have_no_temp_dir_and_run_the_program_itself() {
        for policy in [
            SandboxPolicy::DangerFullAccess,
            SandboxPolicy::ExternalSandbox,
        ] {
            let prepared =
                PreparedSandbox::prepare(policy, Path::new("rel"), &[], &[], &fallback_setup())
                    .unwrap();
            assert!(prepared.private_tmp().is_none());
            assert_eq!(prepared.mode(), None);
            let command = prepared.command("sh", &["-c", "true"], Path::new("/"), [("A", "1")]);
            assert_eq!(command.as_std().get_program(), "sh");
        }
    }

    #[test]
    fn the_private_temp_dir_is_removed_with_the_sandbox() {
        let prepared = PreparedSandbox::prepare(
            SandboxPolicy::ReadOnly {
                network_access: false,
            },
            Path::new("/"),
            &[],
            &[],
            &fallback_setup(),
        )
        .unwrap();
        assert_eq!(prepared.mode(), Some(IsolationMode::Fallback));
        let tmp = prepared.private_tmp().unwrap().to_path_buf();
        assert!(tmp.is_dir());
        drop(prepared);
        assert!(!tmp.exists());
    }

    #[test]
    fn a_namespace_launch_binds_the_root_then_its_git_and_hands_missing_paths_inward() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        let policy = SandboxPolicy::WorkspaceWrite {
            network_access: false,
        };
        let home = root.join("home-not-yet");
        let area = WritableArea::new(&policy, &root, &[], std::slice::from_ref(&home)).unwrap();
        let launcher = Launcher {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            helper: PathBuf::from("/usr/bin/openturn"),
        };
        let Launch::Namespaces { binds, inner, .. } = namespaces(&policy, &area, launcher) else {
            panic!("not a namespace launch");
        };
        let mut bound: Vec<(PathBuf, bool)> =
            binds.into_iter().map(|b| (b.path, b.writable)).collect();
        bound.sort();
        assert_eq!(
            bound,
            vec![
                (root.clone(), true),
                (root.join(".git"), false),
                (root.join("vendor/lib/.git"), false),
            ]
        );
        assert_eq!(inner.writable, vec![PathBuf::from("/tmp"), root.clone()]);
        assert_eq!(inner.protected, vec![home]);
    }
}
