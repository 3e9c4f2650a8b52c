//! Which paths a policy lets be written: the writable roots (the cwd and the configured roots
//! under `WorkspaceWrite`) minus the protected paths (each root's `.git`, openturn's home).
//!
//! This is the one answer to "may this path be written under this policy". The Landlock ruleset
//! for a command is built from it ([`super::PreparedSandbox::prepare`]), and writers that run
//! inside the daemon rather than in a confined child (the `apply_patch` tool) ask
//! [`WritableArea::check`] to decide, then write through [`super::ConfinedWriter`], which holds
//! the writes to this area whatever the file system does between the answer and the write. In namespace mode the mounts enforce exactly
//! this area. In the fallback mode Landlock enforces it more strictly near protected paths (see
//! `filesystem.rs`): a directory on the way down to `.git` cannot gain new entries from a
//! command, while [`WritableArea::check`] answers what the policy means, so a patch may add a
//! file beside `.git`.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use super::error::SandboxError;
use super::policy::SandboxPolicy;

/// The paths one policy lets be written, for one working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableArea {
    scope: Scope,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    /// Unconfined policies: anything the daemon's user may write.
    Everything,
    /// Confined policies: beneath a root and not beneath a protected path. Both canonical.
    Roots {
        policy: &'static str,
        roots: Vec<PathBuf>,
        /// Each root as the caller named it (same order as `roots`, lexically normalized): the
        /// confined writer maps a path written through that name onto the canonical root.
        given_roots: Vec<PathBuf>,
        protected: Vec<PathBuf>,
    },
}

/// Why a path may not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteDenied {
    /// The policy writes nothing (`read-only`).
    #[error("`{path}` cannot be written: the sandbox is {policy}, which allows no writes")]
    ReadOnly { policy: &'static str, path: PathBuf },
    /// The path is not beneath any writable root.
    #[error("`{path}` is outside the writable roots ({})", RootList(roots))]
    Outside { path: PathBuf, roots: Vec<PathBuf> },
    /// The path is beneath a root but also beneath a protected path.
    #[error("`{path}` is inside `{protected}`, which stays read-only")]
    Protected { path: PathBuf, protected: PathBuf },
}

struct RootList<'a>(&'a [PathBuf]);

impl fmt::Display for RootList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, root) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", root.display())?;
        }
        Ok(())
    }
}

impl WritableArea {
    /// The area `policy` allows for work in `cwd`.
    ///
    /// - `writable_roots`: directories writable under `WorkspaceWrite` besides `cwd`.
    /// - `protected_paths`: paths that stay read-only even inside a root (openturn's home);
    ///   every `.git` beneath a root (nested repositories and worktrees included) is added.
    ///
    /// Every path must be absolute; `cwd` and each root must be existing directories.
    pub fn new(
        policy: &SandboxPolicy,
        cwd: &Path,
        writable_roots: &[PathBuf],
        protected_paths: &[PathBuf],
    ) -> Result<WritableArea, SandboxError> {
        if !policy.confines() {
            return Ok(WritableArea {
                scope: Scope::Everything,
            });
        }
        let mut roots = Vec::new();
        let mut given_roots = Vec::new();
        if matches!(policy, SandboxPolicy::WorkspaceWrite { .. }) {
            for root in std::iter::once(cwd).chain(writable_roots.iter().map(PathBuf::as_path)) {
                roots.push(existing_directory(root)?);
                given_roots.push(normalize(root).unwrap_or_else(|| root.to_path_buf()));
            }
        }
        let mut protected = Vec::new();
        for path in protected_paths {
            protected.push(resolve_protected(path)?);
        }
        let mut searched = 0;
        for root in &roots {
            find_repositories(root, policy.name(), &mut searched, &mut protected)?;
        }
        Ok(WritableArea {
            scope: Scope::Roots {
                policy: policy.name(),
                roots,
                given_roots,
                protected,
            },
        })
    }

    /// An area of exactly `roots` with nothing protected inside them, for the file methods a
    /// client calls itself (`fs/*`): the user's own editor writing the user's workspace, where
    /// a `.git` is the user's to edit. A root that is not an existing absolute directory is left
    /// out; with none left, nothing may be written.
    pub fn of_roots(roots: &[PathBuf]) -> WritableArea {
        let mut canonical = Vec::new();
        let mut given_roots = Vec::new();
        for root in roots {
            if let Ok(real) = existing_directory(root) {
                canonical.push(real);
                given_roots.push(normalize(root).unwrap_or_else(|| root.clone()));
            }
        }
        WritableArea {
            scope: Scope::Roots {
                policy: "limited to the client's roots",
                roots: canonical,
                given_roots,
                protected: Vec::new(),
            },
        }
    }

    /// The canonical writable roots and protected paths (empty for the unconfined policies,
    /// which need no rules).
    pub(super) fn parts(&self) -> (&[PathBuf], &[PathBuf]) {
        match &self.scope {
            Scope::Everything => (&[], &[]),
            Scope::Roots {
                roots, protected, ..
            } => (roots, protected),
        }
    }

    /// The canonical writable roots; empty under `read-only` and the unconfined policies.
    pub fn roots(&self) -> &[PathBuf] {
        self.parts().0
    }

    /// The confining policy's name, or `None` for the unconfined policies (the area is
    /// everything the daemon's user may write).
    pub(super) fn confining_policy(&self) -> Option<&'static str> {
        match &self.scope {
            Scope::Everything => None,
            Scope::Roots { policy, .. } => Some(policy),
        }
    }

    /// Each writable root as the caller named it, with its canonical form.
    pub(super) fn root_names(&self) -> impl Iterator<Item = (&Path, &Path)> {
        let (given, canonical): (&[PathBuf], &[PathBuf]) = match &self.scope {
            Scope::Everything => (&[], &[]),
            Scope::Roots {
                given_roots, roots, ..
            } => (given_roots, roots),
        };
        given
            .iter()
            .zip(canonical)
            .map(|(given, canonical)| (given.as_path(), canonical.as_path()))
    }

    /// Whether `path` (absolute) may be written. The path is resolved as the kernel would open
    /// it, symbolic links followed, so a link inside a root that points elsewhere does not let a
    /// write out.
    pub fn check(&self, path: &Path) -> Result<(), WriteDenied> {
        let Scope::Roots {
            policy,
            roots,
            protected,
            ..
        } = &self.scope
        else {
            return Ok(());
        };
        if roots.is_empty() {
            return Err(WriteDenied::ReadOnly {
                policy,
                path: path.to_path_buf(),
            });
        }
        let resolved = resolve(path);
        let Some(resolved) = resolved.filter(|r| roots.iter().any(|root| r.starts_with(root)))
        else {
            return Err(WriteDenied::Outside {
                path: path.to_path_buf(),
                roots: roots.clone(),
            });
        };
        if let Some(inside) = protected.iter().find(|p| resolved.starts_with(p)) {
            return Err(WriteDenied::Protected {
                path: path.to_path_buf(),
                protected: inside.clone(),
            });
        }
        Ok(())
    }
}

/// The most directories searched for repositories beneath a sandbox's roots. Past it the
/// policy is refused: a repository left unfound would be left writable.
const MAX_DIRECTORIES_SEARCHED: usize = 200_000;

/// Adds every `.git` beneath `root` (a directory, or the file a worktree or submodule uses) to
/// `found`, without descending into them or following links. A `.git` that is a link is kept
/// as the link and, when it resolves, as its target. Git runs hooks and reads config from
/// nested repositories too (a `git commit` the user later runs there), so each needs the same
/// protection as the root's.
fn find_repositories(
    root: &Path,
    policy: &'static str,
    searched: &mut usize,
    found: &mut Vec<PathBuf>,
) -> Result<(), SandboxError> {
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        *searched += 1;
        if *searched > MAX_DIRECTORIES_SEARCHED {
            return Err(SandboxError::Unsupported {
                policy,
                reason: format!(
                    "the writable roots hold more than {MAX_DIRECTORIES_SEARCHED} directories, \
                     too many to find every git repository in them (whose `.git` must stay \
                     read-only); narrow the workspace"
                ),
            });
        }
        // A directory this user cannot list is one its commands cannot list either.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if entry.file_name() == ".git" {
                if file_type.is_symlink() {
                    if let Ok(target) = path.canonicalize() {
                        found.push(target);
                    }
                }
                found.push(path);
            } else if file_type.is_dir() {
                pending.push(path);
            }
        }
    }
    Ok(())
}

/// `path` as the kernel would walk it: component by component, an existing component with its
/// links followed (so `..` after a link leaves the link's target, not the link), a missing one
/// taken as written (it holds no link yet; `..` after it comes back, as once it is created).
/// `None` for a dangling link, whose target cannot be told.
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut resolved = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                let candidate = resolved.join(name);
                resolved = match candidate.symlink_metadata() {
                    Ok(_) => candidate.canonicalize().ok()?,
                    Err(_) => candidate,
                };
            }
        }
    }
    Some(resolved)
}

/// `path` with `.` dropped and each `..` taking off the component before it, without looking
/// at the file system: what the kernel would open if no component were a link. `None` for a
/// relative path.
pub(super) fn normalize(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut normal = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            Component::Normal(name) => normal.push(name),
        }
    }
    Some(normal)
}

fn absolute(path: &Path) -> Result<(), SandboxError> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(SandboxError::InvalidPath {
            path: path.to_path_buf(),
            reason: "must be an absolute path".to_string(),
        })
    }
}

/// The canonical form of a directory that must exist (Landlock rules bind to real inodes).
pub(super) fn existing_directory(path: &Path) -> Result<PathBuf, SandboxError> {
    absolute(path)?;
    let canonical = path
        .canonicalize()
        .map_err(|error| SandboxError::InvalidPath {
            path: path.to_path_buf(),
            reason: format!("cannot be resolved: {error}"),
        })?;
    if !canonical.is_dir() {
        return Err(SandboxError::InvalidPath {
            path: path.to_path_buf(),
            reason: "is not a directory".to_string(),
        });
    }
    Ok(canonical)
}

/// A protected path need not exist yet (nothing may create it either): resolve its nearest
/// existing ancestor and keep the rest as written.
pub(super) fn resolve_protected(path: &Path) -> Result<PathBuf, SandboxError> {
    absolute(path)?;
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return Ok(rest
                .iter()
                .rev()
                .fold(canonical, |acc, part| acc.join(part)));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => {
                return Err(SandboxError::InvalidPath {
                    path: path.to_path_buf(),
                    reason: "no ancestor of it can be resolved".to_string(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::sandbox::policy::SandboxPolicy;
    use crate::sandbox::writable::{WritableArea, WriteDenied};

    const WORKSPACE: SandboxPolicy = SandboxPolicy::WorkspaceWrite {
        network_access: false,
    };

    #[test]
    fn workspace_write_allows_the_cwd_and_extra_roots_but_not_git_home_or_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let cwd = base.join("work");
        let extra = base.join("extra");
        let outside = base.join("outside");
        for d in [&cwd, &extra, &outside, &cwd.join(".git"), &cwd.join("home")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&outside, cwd.join("link")).unwrap();
        let area = WritableArea::new(
            &WORKSPACE,
            &cwd,
            std::slice::from_ref(&extra),
            &[cwd.join("home")],
        )
        .unwrap();
        assert_eq!(area.roots(), &[cwd.clone(), extra.clone()]);
        for good in ["a.txt", "new/dir/b.txt", "a/../c.txt", ".gitignore"] {
            assert_eq!(area.check(&cwd.join(good)), Ok(()), "{good}");
        }
        assert_eq!(area.check(&extra.join("x")), Ok(()));
        std::os::unix::fs::symlink(base.join("missing"), cwd.join("dangling")).unwrap();
        for bad in [
            "../outside/x",
            "link/x",
            "link/new/../x",
            "link/../x",
            "a/../../outside/x",
            "/etc/passwd",
            "dangling",
        ] {
            assert!(
                matches!(area.check(&cwd.join(bad)), Err(WriteDenied::Outside { .. })),
                "{bad}"
            );
        }
        for bad in [".git/config", "home/config.toml", "new/../.git/x"] {
            assert!(
                matches!(
                    area.check(&cwd.join(bad)),
                    Err(WriteDenied::Protected { .. })
                ),
                "{bad}"
            );
        }
        let message = area.check(&outside.join("x")).unwrap_err().to_string();
        assert!(message.contains("outside the writable roots"), "{message}");
        assert!(message.contains(&extra.display().to_string()), "{message}");
    }

    #[test]
    fn every_nested_repository_and_worktree_link_is_protected_but_not_walked_into() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [
            ".git/modules/x",
            "vendor/lib/.git/hooks",
            "deep/a/b/.git",
            "src",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(root.join("worktree")).unwrap();
        std::fs::write(root.join("worktree/.git"), "gitdir: ../.git/worktrees/w\n").unwrap();
        // A repository inside `.git` itself is never looked for: `.git` is protected whole.
        std::fs::create_dir_all(root.join(".git/modules/x/.git")).unwrap();
        let area = WritableArea::new(&WORKSPACE, &root, &[], &[]).unwrap();
        let (_, protected) = area.parts();
        let mut found: Vec<String> = protected
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        found.sort();
        assert_eq!(
            found,
            [".git", "deep/a/b/.git", "vendor/lib/.git", "worktree/.git"]
        );
        for bad in [
            "vendor/lib/.git/hooks/pre-commit",
            "worktree/.git",
            "deep/a/b/.git/config",
        ] {
            assert!(
                matches!(
                    area.check(&root.join(bad)),
                    Err(WriteDenied::Protected { .. })
                ),
                "{bad}"
            );
        }
        assert_eq!(area.check(&root.join("vendor/lib/src.rs")), Ok(()));
    }

    #[test]
    fn read_only_writes_nothing_and_unconfined_policies_write_anything() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let read_only = SandboxPolicy::ReadOnly {
            network_access: false,
        };
        let area = WritableArea::new(&read_only, &cwd, &[], &[]).unwrap();
        assert!(matches!(
            area.check(&cwd.join("a")),
            Err(WriteDenied::ReadOnly { .. })
        ));
        for policy in [
            SandboxPolicy::DangerFullAccess,
            SandboxPolicy::ExternalSandbox,
        ] {
            let area = WritableArea::new(&policy, Path::new("rel"), &[], &[]).unwrap();
            assert_eq!(area.check(Path::new("/etc/passwd")), Ok(()));
        }
    }
}
