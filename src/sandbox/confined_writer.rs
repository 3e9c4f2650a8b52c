//! The one confined writer: how the daemon itself (not a confined child) reads, writes and
//! removes files so that nothing it writes lands outside a [`WritableArea`], whatever the file
//! system does meanwhile.
//!
//! [`WritableArea::check`] answers "may this path be written" once; between that answer and
//! the write a command of the same thread may run, and a link swapped in for a directory would
//! send a path-based write anywhere the daemon's user may write. So the writer never writes
//! through a path string. It maps the path onto its writable root (by the name the caller gave
//! the root or its canonical form, after normalizing `.` and `..`), opens the root, and opens
//! the parent directory beneath it without following a single symbolic link
//! ([`super::beneath`]); every read, write, rename and removal then names the file relative to
//! that directory handle. A link anywhere on the way fails the operation
//! ([`WriteError::ThroughLink`]) rather than being followed, even one that points inside the
//! area, because what it points at can change after it is looked at.
//!
//! Writes are a temporary file created beside the target (`O_EXCL | O_NOFOLLOW`), written,
//! given the mode of the file it replaces and fsynced ([`StagedWrite`]), then renamed over the
//! target within the same directory handle; a caller committing several files stages them all
//! first. Under the unconfined policies, and for the exact paths the user allowed outside the
//! area ([`ConfinedWriter::allow_outside`]), the writer opens the parent by its path (links
//! followed, as any program would) and does the same steps from there.
//!
//! Every call blocks on the file system: callers run it off the async threads.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::beneath::{self, Resolver};
use super::writable::{normalize, WritableArea, WriteDenied};

/// How the temporary file of a staged write is named (a random suffix follows): watchers skip
/// these names, which are never the file a client asked about.
pub const TEMP_PREFIX: &str = ".openturn-write.";

/// Reads and writes files inside one [`WritableArea`] without ever following a link out of it.
#[derive(Debug, Clone)]
pub struct ConfinedWriter {
    area: WritableArea,
    /// Normalized absolute paths the user allowed to be written although they lie outside the
    /// area: these, and only these, are written unconfined.
    allowed_outside: Vec<PathBuf>,
    resolver: Resolver,
}

/// Why the writer did not read, write or remove a file.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The path is not in the area (outside every root, inside a protected path, or the policy
    /// writes nothing).
    #[error(transparent)]
    Denied(#[from] WriteDenied),
    /// A component of the path is a symbolic link (or became one): nothing was followed.
    #[error("`{path}` goes through a symbolic link, which is not followed when writing inside the sandbox's writable roots")]
    ThroughLink { path: PathBuf },
    /// The path names something other than a regular file (a directory, a FIFO, a device).
    #[error("`{path}` is not a regular file")]
    NotAFile { path: PathBuf },
    /// The path is relative or names no file (`/`, a root itself).
    #[error("`{path}` does not name a file by an absolute path")]
    BadPath { path: PathBuf },
    /// The file system refused.
    #[error("`{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// A file's directory, opened, and its name in it: every operation on the file goes through
/// these two, never through the path again.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) dir: OwnedFd,
    pub(super) name: OsString,
    /// Whether a link in the file's own place is followed (only when writing unconfined).
    pub(super) follow: bool,
    pub(super) path: PathBuf,
}

/// A new content written and fsynced beside its target, not yet in place. Dropping it removes
/// the temporary file.
#[derive(Debug)]
pub struct StagedWrite {
    slot: Slot,
    temp_name: OsString,
    committed: bool,
}

impl ConfinedWriter {
    /// A writer for `area`: beneath its roots and outside its protected paths, or anywhere when
    /// the area is everything.
    pub fn new(area: &WritableArea) -> ConfinedWriter {
        ConfinedWriter {
            area: area.clone(),
            allowed_outside: Vec::new(),
            resolver: Resolver::PreferOpenat2,
        }
    }

    /// Lets these exact paths (absolute) be written although they are outside the area: the
    /// user approved writing them. Every other path stays confined.
    pub fn allow_outside(mut self, paths: impl IntoIterator<Item = PathBuf>) -> ConfinedWriter {
        self.allowed_outside
            .extend(paths.into_iter().filter_map(|path| normalize(&path)));
        self
    }

    /// The file's content; `None` when it does not exist.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, WriteError> {
        let Some(slot) = self.locate(path, false)? else {
            return Ok(None);
        };
        slot.read()
    }

    /// Writes `content` to a new temporary file beside `path` (creating missing directories
    /// beneath the root), with the mode of the file it will replace, and fsyncs it. Nothing is
    /// in place until [`StagedWrite::commit`].
    pub fn stage(&self, path: &Path, content: &[u8]) -> Result<StagedWrite, WriteError> {
        let slot = self
            .locate(path, true)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        StagedWrite::new(slot, content)
    }

    /// Removes the file (a link in its place is removed, never what it points at).
    pub fn remove(&self, path: &Path) -> Result<(), WriteError> {
        let slot = self
            .locate(path, false)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        beneath::unlink_in(&slot.dir, &slot.name).map_err(|error| slot.error(error))
    }

    /// Opens the directory `path` is in, beneath its root without links (or by its path when
    /// unconfined). `None` when that directory does not exist and `create` is false.
    pub(super) fn locate(&self, path: &Path, create: bool) -> Result<Option<Slot>, WriteError> {
        let bad_path = || WriteError::BadPath {
            path: path.to_path_buf(),
        };
        let normal = normalize(path).ok_or_else(bad_path)?;
        let name = normal.file_name().ok_or_else(bad_path)?.to_os_string();
        let confined = self.area.confining_policy().is_some()
            && !self
                .allowed_outside
                .iter()
                .any(|allowed| allowed == &normal);
        if !confined {
            return locate_unconfined(&normal, name, create, path);
        }
        let (canonical_root, relative) = self.beneath_root(path, &normal)?;
        let mut components: Vec<OsString> = relative
            .components()
            .filter_map(|component| match component {
                Component::Normal(part) => Some(part.to_os_string()),
                _ => None,
            })
            .collect();
        if components.pop().is_none() {
            return Err(bad_path());
        }
        let root = beneath::open_root(&canonical_root).map_err(|error| io_error(path, error))?;
        match beneath::open_dir_beneath(&root, &components, create, self.resolver) {
            Ok(Some(dir)) => Ok(Some(Slot {
                dir,
                name,
                follow: false,
                path: path.to_path_buf(),
            })),
            Ok(None) => Ok(None),
            Err(error) => Err(confined_error(path, error, &self.area)),
        }
    }

    /// Opens the directory `path` names itself (a root included), beneath its root without
    /// links. Confined areas only: `None` when it does not exist and `create` is false; with
    /// `create`, it and its missing parents are made.
    pub(super) fn open_directory(
        &self,
        path: &Path,
        create: bool,
    ) -> Result<Option<OwnedFd>, WriteError> {
        let normal = normalize(path).ok_or_else(|| WriteError::BadPath {
            path: path.to_path_buf(),
        })?;
        let (canonical_root, relative) = self.beneath_root(path, &normal)?;
        let components: Vec<OsString> = relative
            .components()
            .filter_map(|component| match component {
                Component::Normal(part) => Some(part.to_os_string()),
                _ => None,
            })
            .collect();
        let root = beneath::open_root(&canonical_root).map_err(|error| io_error(path, error))?;
        beneath::open_dir_beneath(&root, &components, create, self.resolver)
            .map_err(|error| confined_error(path, error, &self.area))
    }

    /// Whether `path` is one of the area's roots (by its given or canonical name): the tree
    /// operations never remove or replace a root itself.
    pub(super) fn is_root(&self, path: &Path) -> bool {
        normalize(path).is_some_and(|normal| {
            self.area
                .root_names()
                .any(|(given, canonical)| normal == given || normal == canonical)
        })
    }

    /// The canonical root `normal` lies beneath (the deepest, when roots nest) and the rest of
    /// the path below it, after the area's own rules: a protected path is refused here too.
    fn beneath_root(&self, path: &Path, normal: &Path) -> Result<(PathBuf, PathBuf), WriteError> {
        let mut best: Option<(usize, &Path, PathBuf)> = None;
        for (given, canonical) in self.area.root_names() {
            for name in [given, canonical] {
                let Ok(rest) = normal.strip_prefix(name) else {
                    continue;
                };
                let depth = name.components().count();
                if best.as_ref().is_none_or(|(deepest, _, _)| depth > *deepest) {
                    best = Some((depth, canonical, rest.to_path_buf()));
                }
            }
        }
        let Some((_, canonical, relative)) = best else {
            // Not beneath any root by name: `check` tells read-only from outside.
            return Err(match self.area.check(normal) {
                Err(denied) => WriteError::Denied(denied),
                Ok(()) => WriteError::ThroughLink {
                    path: path.to_path_buf(),
                },
            });
        };
        let real = canonical.join(&relative);
        let (_, protected) = self.area.parts();
        if let Some(inside) = protected.iter().find(|p| real.starts_with(p)) {
            return Err(WriteError::Denied(WriteDenied::Protected {
                path: path.to_path_buf(),
                protected: inside.clone(),
            }));
        }
        Ok((canonical.to_path_buf(), relative))
    }

    /// The same writer resolving by the component walk only, as on a kernel without `openat2`.
    #[cfg(test)]
    pub(super) fn walking_only(mut self) -> ConfinedWriter {
        self.resolver = Resolver::Walk;
        self
    }
}

/// The parent opened by its path, links followed: for the unconfined policies and for paths
/// the user allowed outside the area.
fn locate_unconfined(
    normal: &Path,
    name: OsString,
    create: bool,
    path: &Path,
) -> Result<Option<Slot>, WriteError> {
    let parent = normal.parent().unwrap_or(Path::new("/"));
    if create {
        std::fs::create_dir_all(parent).map_err(|error| io_error(path, error))?;
    }
    match beneath::open_root(parent) {
        Ok(dir) => Ok(Some(Slot {
            dir,
            name,
            follow: true,
            path: path.to_path_buf(),
        })),
        Err(error) if error.kind() == io::ErrorKind::NotFound && !create => Ok(None),
        Err(error) => Err(io_error(path, error)),
    }
}

impl Slot {
    pub(super) fn error(&self, error: io::Error) -> WriteError {
        if !self.follow && error.raw_os_error() == Some(libc::ELOOP) {
            return WriteError::ThroughLink {
                path: self.path.clone(),
            };
        }
        io_error(&self.path, error)
    }

    pub(super) fn read(&self) -> Result<Option<Vec<u8>>, WriteError> {
        let mut file = match beneath::open_file(&self.dir, &self.name, self.follow) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(self.error(error)),
        };
        let metadata = file.metadata().map_err(|error| self.error(error))?;
        if !metadata.is_file() {
            return Err(WriteError::NotAFile {
                path: self.path.clone(),
            });
        }
        let mut content = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        file.read_to_end(&mut content)
            .map_err(|error| self.error(error))?;
        Ok(Some(content))
    }
}

impl StagedWrite {
    /// Creates the temporary file beside the slot's file and writes `content` into it.
    pub(super) fn new(slot: Slot, content: &[u8]) -> Result<StagedWrite, WriteError> {
        let temp_name = OsString::from(format!("{TEMP_PREFIX}{}", uuid::Uuid::new_v4().simple()));
        let mut file =
            beneath::create_new_file(&slot.dir, &temp_name).map_err(|error| slot.error(error))?;
        let staged = StagedWrite {
            slot,
            temp_name,
            committed: false,
        };
        staged.fill(&mut file, content)?;
        Ok(staged)
    }

    fn fill(&self, file: &mut std::fs::File, content: &[u8]) -> Result<(), WriteError> {
        let error = |error| self.slot.error(error);
        file.write_all(content).map_err(error)?;
        // Keep the mode of the file being replaced (an executable script stays executable).
        let replaced = beneath::stat_entry(&self.slot.dir, &self.slot.name).map_err(error)?;
        if let Some(stat) = replaced.filter(|stat| stat.st_mode & libc::S_IFMT == libc::S_IFREG) {
            file.set_permissions(std::fs::Permissions::from_mode(stat.st_mode & 0o7777))
                .map_err(error)?;
        }
        file.sync_all().map_err(error)
    }

    /// Renames the temporary file over its target, in the directory it was staged in.
    pub fn commit(mut self) -> Result<(), WriteError> {
        beneath::rename_in(&self.slot.dir, &self.temp_name, &self.slot.name)
            .map_err(|error| self.slot.error(error))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for StagedWrite {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: a temporary file left behind is visible but harmless.
            let _ = beneath::unlink_in(&self.slot.dir, &self.temp_name);
        }
    }
}

pub(super) fn io_error(path: &Path, source: io::Error) -> WriteError {
    WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An error from opening a directory beneath a root: a link is reported as one, a resolution
/// the kernel caught leaving the root as outside the area.
fn confined_error(path: &Path, error: io::Error, area: &WritableArea) -> WriteError {
    match error.raw_os_error() {
        Some(libc::ELOOP) => WriteError::ThroughLink {
            path: path.to_path_buf(),
        },
        Some(libc::EXDEV) => WriteError::Denied(WriteDenied::Outside {
            path: path.to_path_buf(),
            roots: area.roots().to_vec(),
        }),
        _ => io_error(path, error),
    }
}

#[cfg(test)]
#[path = "confined_writer_tests.rs"]
mod tests;
