//! The private temp dir a confined command gets as `TMPDIR`: fresh for each prepared sandbox,
//! readable only by the daemon's user, removed when the sandbox is dropped. Commands need a
//! writable temp dir even under `read-only`, and a private one keeps them from reading or
//! planting files in another command's.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::error::SandboxError;

/// Owns the directory; dropping it removes the directory and everything in it.
#[derive(Debug)]
pub(super) struct PrivateTmp {
    path: PathBuf,
}

impl PrivateTmp {
    /// Creates `<system temp>/openturn-sandbox-<random>` with mode 0700.
    pub(super) fn create() -> Result<Self, SandboxError> {
        let base = std::env::temp_dir();
        let path = base.join(format!(
            "openturn-sandbox-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|source| SandboxError::Setup {
                action: "creating the private temp dir",
                source,
            })?;
        // Landlock rules bind to the resolved directory, so hand out the canonical path.
        let path = path.canonicalize().map_err(|source| SandboxError::Setup {
            action: "resolving the private temp dir",
            source,
        })?;
        Ok(Self { path })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
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
