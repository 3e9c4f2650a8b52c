//! The Landlock ruleset: what a confined command may read, write and connect to.
//!
//! Landlock rules only ever add rights, and a right granted on a directory covers everything
//! beneath it. So a protected path inside a writable root (`.git`, openturn's home) cannot be
//! carved out of a grant on the root; instead the root is split: each entry beside the
//! protected path gets the write grant, the protected path gets none, and the directories on
//! the way down to it stay read-only themselves (nothing can be created, removed or renamed
//! directly in them). That is stricter than asked, never weaker; `docs/SANDBOX.md` explains the
//! cost (no new top-level files in a repository root). In namespace mode the ruleset is built
//! inside the namespaces, where existing protected paths are read-only mounts already, so only
//! a protected path that does not exist yet still splits its root.
//!
//! Reads are split the same way in the fallback, around the directory holding every command's
//! private temp dir, so one command cannot read another's temp files.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};

use super::error::SandboxError;
use super::probe::{LANDLOCK_SCOPE_ABI, LANDLOCK_TCP_ABI};

/// Device files commands expect to open for writing (output sinks, terminals, entropy).
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The most rules one sandbox may need when splitting roots around protected paths; past it
/// the policy is refused rather than approximated.
const MAX_WRITE_RULES: usize = 4096;

/// Whether a planned write grant is on a directory (the whole tree beneath) or a single file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum GrantKind {
    Directory,
    File,
}

/// What one ruleset grants beyond reading everything.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grants<'a> {
    /// The policy's name, for a refusal.
    pub(super) policy: &'static str,
    /// Trees the command may write (canonical).
    pub(super) writable_roots: &'a [PathBuf],
    /// Paths inside them that stay read-only (canonical; they need not exist).
    pub(super) protected: &'a [PathBuf],
    /// The command's own temp dir, granted whole even inside `unreadable`.
    pub(super) own_tmp: Option<&'a Path>,
    /// Trees whose files the command may neither read nor write (other commands' temp dirs);
    /// their names can still be listed.
    pub(super) unreadable: &'a [PathBuf],
}

/// Builds the ruleset (in the daemon for the fallback, in the helper inside the namespaces) and
/// returns its fd, to be applied by the process that becomes the command.
pub(super) fn ruleset(
    abi_version: i32,
    network_access: bool,
    grants: &Grants<'_>,
) -> Result<OwnedFd, SandboxError> {
    let abi = ABI::from(abi_version);
    let handled = AccessFs::from_all(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(handled)
        .map_err(landlock_error("declaring the filesystem rights"))?;
    if !network_access && abi_version >= LANDLOCK_TCP_ABI {
        // Handled with no rule: every TCP bind and connect is refused.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(landlock_error("declaring the TCP rights"))?;
    }
    if abi_version >= LANDLOCK_SCOPE_ABI {
        // Signals and abstract UNIX sockets stay inside the command's own process tree.
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(landlock_error("declaring the scopes"))?;
    }
    let mut created = ruleset
        .create()
        .map_err(landlock_error("creating the ruleset"))?;

    // Everything is readable and executable (but see `unreadable`); pathname UNIX sockets stay
    // reachable (ABI 9+) as far as Landlock goes: the seccomp filter decides about sockets.
    let read = AccessFs::from_read(abi) | (handled & AccessFs::ResolveUnix);
    if grants.unreadable.is_empty() {
        created = add(created, Path::new("/"), read)?;
    } else {
        // Directories stay listable everywhere (a grant cannot leave out a subtree); file
        // contents only outside `unreadable`.
        created = add(created, Path::new("/"), AccessFs::ReadDir.into())?;
        let read_file = read & AccessFs::from_file(abi);
        let everything = [PathBuf::from("/")];
        for (path, kind) in plan_grants(&everything, grants.unreadable, grants.policy)? {
            let access = match kind {
                GrantKind::Directory => read,
                GrantKind::File => read_file,
            };
            created = add_planned(created, &path, access)?;
        }
    }

    let device =
        (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev)
            & handled;
    for device_path in WRITABLE_DEVICES {
        let path = Path::new(device_path);
        if let Ok(metadata) = path.metadata() {
            let access = if metadata.is_dir() {
                device | AccessFs::ReadDir
            } else {
                device
            };
            created = add(created, path, access)?;
        }
    }

    // Writes: everything but creating device nodes (never needed, and a root-owned command
    // could use one to reach a raw disk) and device ioctls (kept to the devices above).
    let write_dir = handled & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev);
    let write_file = write_dir & AccessFs::from_file(abi);
    let mut excluded = grants.protected.to_vec();
    excluded.extend(grants.unreadable.iter().cloned());
    for (path, kind) in plan_grants(grants.writable_roots, &excluded, grants.policy)? {
        let access = match kind {
            GrantKind::Directory => write_dir,
            GrantKind::File => write_file,
        };
        created = add_planned(created, &path, access)?;
    }
    if let Some(own_tmp) = grants.own_tmp {
        created = add(created, own_tmp, write_dir)?;
    }
    Option::<OwnedFd>::from(created).ok_or_else(|| SandboxError::Landlock {
        action: "creating the ruleset",
        message: "the kernel returned no ruleset".to_string(),
    })
}

fn add(
    created: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    let fd = PathFd::new(path).map_err(|error| SandboxError::InvalidPath {
        path: path.to_path_buf(),
        reason: error.to_string(),
    })?;
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(landlock_error("adding a path rule"))
}

/// [`add`] for a planned grant: an entry removed since the plan listed it (another command's
/// temp dir, a build's scratch file) grants nothing and is skipped.
fn add_planned(
    created: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    match PathFd::new(path) {
        Ok(fd) => created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(landlock_error("adding a path rule")),
        Err(landlock::PathFdError::OpenCall { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(created)
        }
        Err(error) => Err(SandboxError::InvalidPath {
            path: path.to_path_buf(),
            reason: error.to_string(),
        }),
    }
}

fn landlock_error(action: &'static str) -> impl Fn(landlock::RulesetError) -> SandboxError {
    move |error| SandboxError::Landlock {
        action,
        message: error.to_string(),
    }
}

/// The grants covering `roots` but nothing beneath an `excluded` path (canonical). Symlinks are
/// never granted: a grant follows the link, and a link inside the workspace may point anywhere.
pub(super) fn plan_grants(
    roots: &[PathBuf],
    excluded: &[PathBuf],
    policy: &'static str,
) -> Result<Vec<(PathBuf, GrantKind)>, SandboxError> {
    let mut grants = Vec::new();
    for root in roots {
        if excluded.iter().any(|p| root.starts_with(p)) {
            continue;
        }
        grant(root, GrantKind::Directory, excluded, policy, &mut grants)?;
    }
    Ok(grants)
}

fn grant(
    path: &Path,
    kind: GrantKind,
    protected: &[PathBuf],
    policy: &'static str,
    grants: &mut Vec<(PathBuf, GrantKind)>,
) -> Result<(), SandboxError> {
    if protected.iter().any(|p| p == path) {
        return Ok(());
    }
    let contains_protected =
        kind == GrantKind::Directory && protected.iter().any(|p| p.starts_with(path) && p != path);
    if !contains_protected {
        if grants.len() >= MAX_WRITE_RULES {
            return Err(SandboxError::Unsupported {
                policy,
                reason: format!(
                    "keeping protected paths out of reach needs more than {MAX_WRITE_RULES} \
                     rules near `{}`",
                    path.display()
                ),
            });
        }
        grants.push((path.to_path_buf(), kind));
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|source| SandboxError::Setup {
        action: "listing a writable root that holds a protected path",
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| SandboxError::Setup {
            action: "listing a writable root that holds a protected path",
            source,
        })?;
        let file_type = entry.file_type().map_err(|source| SandboxError::Setup {
            action: "reading an entry of a writable root",
            source,
        })?;
        if file_type.is_symlink() {
            continue;
        }
        let kind = if file_type.is_dir() {
            GrantKind::Directory
        } else {
            GrantKind::File
        };
        grant(&entry.path(), kind, protected, policy, grants)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(grants: &[(PathBuf, GrantKind)], base: &Path) -> Vec<(String, GrantKind)> {
        let mut names: Vec<_> = grants
            .iter()
            .map(|(path, kind)| {
                let relative = path.strip_prefix(base).unwrap_or(path);
                (relative.display().to_string(), *kind)
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_root_without_protected_paths_is_granted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        let grants = plan_grants(std::slice::from_ref(&root), &[], "workspace-write").unwrap();
        assert_eq!(grants, vec![(root, GrantKind::Directory)]);
    }

    #[test]
    fn a_protected_path_splits_its_ancestors_and_skips_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("deep/inner")).unwrap();
        std::fs::write(root.join("README"), "x").unwrap();
        std::fs::write(root.join("deep/file"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
        let protected = vec![root.join(".git"), root.join("deep/inner/home")];
        let grants =
            plan_grants(std::slice::from_ref(&root), &protected, "workspace-write").unwrap();
        assert_eq!(
            names(&grants, &root),
            vec![
                ("README".to_string(), GrantKind::File),
                ("deep/file".to_string(), GrantKind::File),
                ("src".to_string(), GrantKind::Directory),
            ],
            "`.git` gets nothing, `deep/inner` (which would hold the protected home) is split \
             too, and the symlink to /etc is never granted"
        );
    }

    #[test]
    fn a_root_inside_a_protected_path_is_not_granted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home/sub")).unwrap();
        let grants = plan_grants(
            &[root.join("home/sub")],
            &[root.join("home")],
            "workspace-write",
        )
        .unwrap();
        assert!(grants.is_empty(), "{grants:?}");
    }
}
