//! The private temp dir a confined command gets as `TMPDIR` in the fallback mode (in namespace
//! mode `/tmp` itself is a fresh tmpfs per command): fresh for each prepared sandbox, removed
//! when the sandbox is dropped. Commands need a writable temp dir even under `read-only`.
//!
//! Every such dir lives in one base dir per user (`<system temp>/openturn-sandbox-<uid>`), so the
//! Landlock ruleset can leave the whole base out of what a command may read and grant back only
//! its own dir: one command cannot read or plant files in another's.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::SandboxError;

/// Owns the directory; dropping it removes the directory and everything in it.
#[derive(Debug)]
pub(super) struct PrivateTmp {
    base: PathBuf,
    path: PathBuf,
}

impl PrivateTmp {
    /// Creates `<base>/<random>` with mode 0700, the base first when missing.
    pub(super) fn create() -> Result<Self, SandboxError> {
        let base = base_dir()?;
        let path = base.join(uuid::Uuid::new_v4().simple().to_string());
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|source| SandboxError::Setup {
                action: "creating the private temp dir",
                source,
            })?;
        Ok(Self { base, path })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory holding every command's temp dir (canonical).
    pub(super) fn base(&self) -> &Path {
        &self.base
    }
}

/// `<system temp>/openturn-sandbox-<uid>`, created 0700 when missing. In a shared `/tmp` another
/// user could have made it first (or put a link there), so an existing one must be a real
/// directory of ours; its mode is put back to 0700 if something opened it.
fn base_dir() -> Result<PathBuf, SandboxError> {
    // SAFETY: geteuid cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    let temp = std::env::temp_dir()
        .canonicalize()
        .map_err(|source| SandboxError::Setup {
            action: "resolving the system temp dir",
            source,
        })?;
    let base = temp.join(format!("openturn-sandbox-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&base) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(SandboxError::Setup {
                action: "creating the base of the private temp dirs",
                source,
            })
        }
    }
    let metadata = base
        .symlink_metadata()
        .map_err(|source| SandboxError::Setup {
            action: "checking the base of the private temp dirs",
            source,
        })?;
    if !metadata.is_dir() || metadata.uid() != uid {
        return Err(SandboxError::InvalidPath {
            path: base,
            reason: "exists but is not a directory of this user; remove it".to_string(),
        });
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        // Ours, but opened up (a command under `workspace-write` in the fallback may chmod
        // it): close it again rather than refuse every later command.
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).map_err(
            |source| SandboxError::Setup {
                action: "making the base of the private temp dirs private again",
                source,
            },
        )?;
    }
    Ok(base)
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %self.path.display(), %error, "could not remove a sandbox temp dir");
            }
        }
    }
}
