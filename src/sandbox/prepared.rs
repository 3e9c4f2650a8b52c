//! A sandbox built in the daemon for one command: the Landlock ruleset, the seccomp programs
//! and the private temp dir, plus the calls that hand them to a `Command`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::child::ChildConfinement;
use super::error::SandboxError;
use super::policy::SandboxPolicy;
use super::private_tmp::PrivateTmp;
use super::writable::WritableArea;
use super::{filesystem, probe, syscalls};

/// The confinement for one command. Keep it alive until the command has exited: dropping it
/// removes the private temp dir (`TMPDIR`) the command may still be using.
#[derive(Debug)]
pub struct PreparedSandbox {
    policy: SandboxPolicy,
    confinement: Option<Arc<ChildConfinement>>,
    private_tmp: Option<PrivateTmp>,
}

impl PreparedSandbox {
    /// Builds everything `policy` needs, in the daemon.
    ///
    /// - `cwd`: the command's working directory (writable under `WorkspaceWrite`).
    /// - `writable_roots`: further directories writable under `WorkspaceWrite`; ignored by the
    ///   other policies.
    /// - `protected_paths`: paths that stay read-only even inside a writable root (openturn's
    ///   home, say); `<root>/.git` of every writable root is added automatically.
    ///
    /// Every path must be absolute; `cwd` and each writable root must be existing directories.
    /// A confining policy this kernel cannot enforce completely is `Unsupported`.
    pub fn prepare(
        policy: SandboxPolicy,
        cwd: &Path,
        writable_roots: &[PathBuf],
        protected_paths: &[PathBuf],
    ) -> Result<Self, SandboxError> {
        if !policy.confines() {
            return Ok(Self {
                policy,
                confinement: None,
                private_tmp: None,
            });
        }
        let support = probe::probe();
        support.check(&policy)?;
        // The same area in-process writers consult, so they and commands agree on what is writable.
        let area = WritableArea::new(&policy, cwd, writable_roots, protected_paths)?;
        let private_tmp = PrivateTmp::create()?;
        let (area_roots, protected) = area.parts();
        let mut roots = vec![private_tmp.path().to_path_buf()];
        roots.extend(area_roots.iter().cloned());
        let network_access = policy.network_access();
        let ruleset = filesystem::ruleset(support.landlock_abi, network_access, &roots, protected)?;
        let programs = syscalls::programs(network_access)?;
        Ok(Self {
            policy,
            confinement: Some(Arc::new(ChildConfinement { ruleset, programs })),
            private_tmp: Some(private_tmp),
        })
    }

    /// The policy this sandbox enforces.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The command's private temp dir, present for the confining policies.
    pub fn private_tmp(&self) -> Option<&Path> {
        self.private_tmp.as_ref().map(PrivateTmp::path)
    }

    /// Confines the calling process. Meant for a `pre_exec` hook, i.e. the forked child before
    /// `exec`: it only makes raw syscalls and allocates nothing (async-signal-safe). A no-op for
    /// the unconfined policies. Calling it in the daemon itself would confine the daemon.
    pub fn apply_in_child(&self) -> io::Result<()> {
        match &self.confinement {
            Some(confinement) => confinement.apply(),
            None => Ok(()),
        }
    }

    /// Installs the sandbox on a tokio command: `TMPDIR` points at the private temp dir and a
    /// `pre_exec` hook confines the child. A confinement failure in the child makes `spawn`
    /// return that error; the command never runs unconfined.
    pub fn install(&self, command: &mut tokio::process::Command) {
        if let Some(tmp) = self.private_tmp() {
            command.env("TMPDIR", tmp);
        }
        if let Some(confinement) = self.confinement.clone() {
            // SAFETY: the hook only runs `ChildConfinement::apply`, which is async-signal-safe.
            unsafe {
                command.pre_exec(move || confinement.apply());
            }
        }
    }

    /// [`Self::install`] for a `std::process::Command`.
    pub fn install_std(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        if let Some(tmp) = self.private_tmp() {
            command.env("TMPDIR", tmp);
        }
        if let Some(confinement) = self.confinement.clone() {
            // SAFETY: as in `install`.
            unsafe {
                command.pre_exec(move || confinement.apply());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::writable::resolve_protected;
    use super::*;

    #[test]
    fn relative_and_missing_paths_are_named_in_the_error() {
        let policy = SandboxPolicy::WorkspaceWrite {
            network_access: false,
        };
        let error =
            PreparedSandbox::prepare(policy.clone(), Path::new("rel"), &[], &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "sandbox path `rel`: must be an absolute path"
        );
        let error = PreparedSandbox::prepare(
            policy,
            Path::new("/"),
            &[PathBuf::from("/definitely/not/here")],
            &[],
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
    fn unconfined_policies_have_no_temp_dir_and_no_hook() {
        for policy in [
            SandboxPolicy::DangerFullAccess,
            SandboxPolicy::ExternalSandbox,
        ] {
            let prepared = PreparedSandbox::prepare(policy, Path::new("rel"), &[], &[]).unwrap();
            assert!(prepared.private_tmp().is_none());
            assert!(prepared.apply_in_child().is_ok());
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
        )
        .unwrap();
        let tmp = prepared.private_tmp().unwrap().to_path_buf();
        assert!(tmp.is_dir());
        drop(prepared);
        assert!(!tmp.exists());
    }
}
