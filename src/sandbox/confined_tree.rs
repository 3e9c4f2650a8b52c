//! Whole-file and directory operations beneath a confined area's roots, for the file methods a
//! client calls (`fs/*`): read, write, metadata, list, create, remove, copy.
//!
//! They follow the confined writer's rule (see [`super::confined_writer`]): a path is mapped
//! onto its root by name, every directory on the way is opened beneath the root without
//! following a link, and each operation names its target relative to that directory handle.
//! A link is never followed, in the path or in a tree being removed or copied: removing a tree
//! unlinks the links in it, copying one recreates them as links, and a link in the path fails
//! the operation. So nothing outside the named path (and nothing outside the roots) is read,
//! changed or removed. A root itself is never removed or replaced.
//!
//! Trees are bounded ([`MAX_TREE_ENTRIES`], [`MAX_TREE_DEPTH`]) so one request cannot hold a
//! thread or descriptors without end. Every call blocks: callers run it off the async threads.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::beneath;
use super::confined_writer::{io_error, ConfinedWriter, Slot, StagedWrite, WriteError};
use super::writable::normalize;

/// The most entries one recursive remove or copy visits.
pub const MAX_TREE_ENTRIES: usize = 100_000;

/// The deepest a recursive remove or copy descends (each level holds a descriptor).
pub const MAX_TREE_DEPTH: usize = 128;

/// What a path is, links not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// A path's kind and times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryMetadata {
    pub kind: EntryKind,
    /// Unix milliseconds; `0` when unknown.
    pub modified_ms: i64,
    /// Unix milliseconds; `0` when the file system does not say (as `fstatat` never does).
    pub created_ms: i64,
}

/// Why a tree operation did nothing (or stopped).
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A directory copy without `recursive`.
    #[error("fs/copy requires recursive: true when sourcePath is a directory (`{path}`)")]
    NeedsRecursive { path: PathBuf },
    /// A directory copied into itself would never end.
    #[error("cannot copy `{source_path}` into itself (`{destination}`)")]
    IntoItself {
        source_path: PathBuf,
        destination: PathBuf,
    },
    /// The operation would replace or remove one of the roots.
    #[error("`{path}` is one of the roots the client may use; it cannot be removed or replaced")]
    IsRoot { path: PathBuf },
    /// The tree is larger or deeper than one request may touch.
    #[error("`{path}` holds more than {MAX_TREE_ENTRIES} entries or {MAX_TREE_DEPTH} levels; stopped there")]
    TooLarge { path: PathBuf },
}

impl ConfinedWriter {
    /// The file's bytes (a regular file; a link is refused, a missing file is an error).
    pub fn read_file(&self, path: &Path) -> Result<Vec<u8>, WriteError> {
        self.read(path)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))
    }

    /// Replaces (or creates) the file in an existing directory: staged beside it, then renamed
    /// over it. Missing parents are not created, as on the reference.
    pub fn write_file(&self, path: &Path, content: &[u8]) -> Result<(), TreeError> {
        if self.is_root(path) {
            return Err(TreeError::IsRoot {
                path: path.to_path_buf(),
            });
        }
        let slot = self
            .locate(path, false)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        if let Some(stat) = beneath::stat_entry(&slot.dir, &slot.name).map_err(|e| slot.error(e))? {
            if kind_of(stat.st_mode) == EntryKind::Directory {
                return Err(WriteError::NotAFile {
                    path: path.to_path_buf(),
                }
                .into());
            }
        }
        Ok(StagedWrite::new(slot, content)?.commit()?)
    }

    /// What `path` is (a link reports itself, not its target).
    pub fn metadata(&self, path: &Path) -> Result<EntryMetadata, WriteError> {
        if self.is_root(path) {
            let dir = self
                .open_directory(path, false)?
                .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
            let metadata = std::fs::File::from(dir)
                .metadata()
                .map_err(|e| io_error(path, e))?;
            return Ok(EntryMetadata {
                kind: EntryKind::Directory,
                modified_ms: std::os::unix::fs::MetadataExt::mtime(&metadata) * 1000
                    + std::os::unix::fs::MetadataExt::mtime_nsec(&metadata) / 1_000_000,
                created_ms: 0,
            });
        }
        let slot = self
            .locate(path, false)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        let stat = beneath::stat_entry(&slot.dir, &slot.name)
            .map_err(|e| slot.error(e))?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        Ok(EntryMetadata {
            kind: kind_of(stat.st_mode),
            modified_ms: stat.st_mtime * 1000 + stat.st_mtime_nsec / 1_000_000,
            created_ms: 0,
        })
    }

    /// The directory's children, sorted by name, with their kinds (links not followed).
    pub fn read_directory(&self, path: &Path) -> Result<Vec<(String, EntryKind)>, WriteError> {
        let dir = self
            .open_directory(path, false)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        let mut entries: Vec<(String, EntryKind)> = beneath::list_dir(&dir)
            .map_err(|e| io_error(path, e))?
            .into_iter()
            .map(|(name, file_type)| {
                let kind = if file_type.is_symlink() {
                    EntryKind::Symlink
                } else if file_type.is_dir() {
                    EntryKind::Directory
                } else if file_type.is_file() {
                    EntryKind::File
                } else {
                    EntryKind::Other
                };
                (name.to_string_lossy().into_owned(), kind)
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    /// Makes the directory; `recursive` also makes missing parents and accepts an existing
    /// directory, otherwise the parent must exist and the path must not.
    pub fn create_directory(&self, path: &Path, recursive: bool) -> Result<(), WriteError> {
        if recursive {
            return self.open_directory(path, true).map(|_| ());
        }
        let slot = self
            .locate(path, false)?
            .ok_or_else(|| io_error(path, io::ErrorKind::NotFound.into()))?;
        beneath::create_dir_in(&slot.dir, &slot.name).map_err(|e| slot.error(e))
    }

    /// Removes a file, a link (never its target) or a directory (its contents too when
    /// `recursive`). A missing path is fine when `force`.
    pub fn remove_path(&self, path: &Path, recursive: bool, force: bool) -> Result<(), TreeError> {
        if self.is_root(path) {
            return Err(TreeError::IsRoot {
                path: path.to_path_buf(),
            });
        }
        let missing = || -> Result<(), TreeError> {
            if force {
                Ok(())
            } else {
                Err(io_error(path, io::ErrorKind::NotFound.into()).into())
            }
        };
        let Some(slot) = self.locate(path, false)? else {
            return missing();
        };
        let Some(stat) = beneath::stat_entry(&slot.dir, &slot.name).map_err(|e| slot.error(e))?
        else {
            return missing();
        };
        if kind_of(stat.st_mode) != EntryKind::Directory {
            return Ok(beneath::unlink_in(&slot.dir, &slot.name).map_err(|e| slot.error(e))?);
        }
        if recursive {
            let dir = beneath::open_child_dir(&slot.dir, &slot.name).map_err(|e| slot.error(e))?;
            let mut budget = Budget::default();
            clear_dir(&dir, path, 1, &mut budget)?;
        }
        Ok(beneath::remove_dir_in(&slot.dir, &slot.name).map_err(|e| slot.error(e))?)
    }

    /// Copies a file, a link (as a link) or, with `recursive`, a directory tree. The
    /// destination's parent must exist; a file there is replaced, a directory there is merged
    /// into.
    pub fn copy_path(
        &self,
        source: &Path,
        destination: &Path,
        recursive: bool,
    ) -> Result<(), TreeError> {
        if self.is_root(destination) {
            return Err(TreeError::IsRoot {
                path: destination.to_path_buf(),
            });
        }
        let target = self
            .locate(destination, false)?
            .ok_or_else(|| io_error(destination, io::ErrorKind::NotFound.into()))?;
        if self.is_root(source) {
            let dir = self
                .open_directory(source, false)?
                .ok_or_else(|| io_error(source, io::ErrorKind::NotFound.into()))?;
            return copy_directory(source, &dir, destination, target, recursive);
        }
        let from = self
            .locate(source, false)?
            .ok_or_else(|| io_error(source, io::ErrorKind::NotFound.into()))?;
        let stat = beneath::stat_entry(&from.dir, &from.name)
            .map_err(|e| from.error(e))?
            .ok_or_else(|| io_error(source, io::ErrorKind::NotFound.into()))?;
        match kind_of(stat.st_mode) {
            EntryKind::Directory => {
                let dir =
                    beneath::open_child_dir(&from.dir, &from.name).map_err(|e| from.error(e))?;
                copy_directory(source, &dir, destination, target, recursive)
            }
            _ => copy_entry(&from, target).map_err(TreeError::from),
        }
    }
}

/// Counts what a recursive operation visits against [`MAX_TREE_ENTRIES`].
#[derive(Default)]
struct Budget {
    entries: usize,
}

impl Budget {
    fn take(&mut self, path: &Path, depth: usize) -> Result<(), TreeError> {
        self.entries += 1;
        if self.entries > MAX_TREE_ENTRIES || depth > MAX_TREE_DEPTH {
            return Err(TreeError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        Ok(())
    }
}

fn kind_of(mode: libc::mode_t) -> EntryKind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => EntryKind::File,
        libc::S_IFDIR => EntryKind::Directory,
        libc::S_IFLNK => EntryKind::Symlink,
        _ => EntryKind::Other,
    }
}

/// An error on `name` inside the directory at `path`: a link met where a directory was
/// opened is reported as one.
fn child_error(path: &Path, error: io::Error) -> WriteError {
    if error.raw_os_error() == Some(libc::ELOOP) {
        return WriteError::ThroughLink {
            path: path.to_path_buf(),
        };
    }
    io_error(path, error)
}

/// Removes everything inside `dir` (whose path is `path`), depth first, unlinking links.
fn clear_dir(
    dir: &OwnedFd,
    path: &Path,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), TreeError> {
    for (name, file_type) in beneath::list_dir(dir).map_err(|e| io_error(path, e))? {
        let child = path.join(&name);
        budget.take(&child, depth)?;
        if file_type.is_dir() {
            let inner = beneath::open_child_dir(dir, &name).map_err(|e| child_error(&child, e))?;
            clear_dir(&inner, &child, depth + 1, budget)?;
            beneath::remove_dir_in(dir, &name).map_err(|e| child_error(&child, e))?;
        } else {
            beneath::unlink_in(dir, &name).map_err(|e| child_error(&child, e))?;
        }
    }
    Ok(())
}

/// Copies the directory `dir` (at `source`) to `target` (at `destination`).
fn copy_directory(
    source: &Path,
    dir: &OwnedFd,
    destination: &Path,
    target: Slot,
    recursive: bool,
) -> Result<(), TreeError> {
    if !recursive {
        return Err(TreeError::NeedsRecursive {
            path: source.to_path_buf(),
        });
    }
    let (from, to) = (normalize(source), normalize(destination));
    if let (Some(from), Some(to)) = (from, to) {
        if to.starts_with(&from) {
            return Err(TreeError::IntoItself {
                source_path: source.to_path_buf(),
                destination: destination.to_path_buf(),
            });
        }
    }
    let made = open_or_make_dir(&target.dir, &target.name, destination)?;
    copy_contents(dir, source, &made, destination, 1, &mut Budget::default())
}

/// Opens the directory `name` in `parent`, making it first when missing; a link there fails.
fn open_or_make_dir(
    parent: &OwnedFd,
    name: &std::ffi::OsStr,
    path: &Path,
) -> Result<OwnedFd, WriteError> {
    match beneath::create_dir_in(parent, name) {
        Ok(()) => {}
        Err(error) if error.raw_os_error() == Some(libc::EEXIST) => {}
        Err(error) => return Err(child_error(path, error)),
    }
    beneath::open_child_dir(parent, name).map_err(|e| child_error(path, e))
}

fn copy_contents(
    from: &OwnedFd,
    source: &Path,
    to: &OwnedFd,
    destination: &Path,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), TreeError> {
    for (name, file_type) in beneath::list_dir(from).map_err(|e| io_error(source, e))? {
        let (child_source, child_destination) = (source.join(&name), destination.join(&name));
        budget.take(&child_source, depth)?;
        if file_type.is_dir() {
            let inner_from =
                beneath::open_child_dir(from, &name).map_err(|e| child_error(&child_source, e))?;
            let inner_to = open_or_make_dir(to, &name, &child_destination)?;
            copy_contents(
                &inner_from,
                &child_source,
                &inner_to,
                &child_destination,
                depth + 1,
                budget,
            )?;
            continue;
        }
        let duplicate = |fd: &OwnedFd, path: &Path| fd.try_clone().map_err(|e| io_error(path, e));
        let source_slot = Slot {
            dir: duplicate(from, &child_source)?,
            name: name.clone(),
            follow: false,
            path: child_source,
        };
        let target_slot = Slot {
            dir: duplicate(to, &child_destination)?,
            name,
            follow: false,
            path: child_destination,
        };
        copy_entry(&source_slot, target_slot)?;
    }
    Ok(())
}

/// Copies one non-directory: a regular file's bytes, or a link as a link. Anything else (a
/// FIFO, a device) is refused rather than read.
fn copy_entry(from: &Slot, to: Slot) -> Result<(), WriteError> {
    let stat = beneath::stat_entry(&from.dir, &from.name)
        .map_err(|e| from.error(e))?
        .ok_or_else(|| io_error(&from.path, io::ErrorKind::NotFound.into()))?;
    match kind_of(stat.st_mode) {
        EntryKind::Symlink => {
            let link = beneath::read_link_in(&from.dir, &from.name).map_err(|e| from.error(e))?;
            beneath::symlink_in(&link, &to.dir, &to.name).map_err(|e| to.error(e))
        }
        EntryKind::File => {
            let content = from
                .read()?
                .ok_or_else(|| io_error(&from.path, io::ErrorKind::NotFound.into()))?;
            StagedWrite::new(to, &content)?.commit()
        }
        EntryKind::Directory | EntryKind::Other => Err(WriteError::NotAFile {
            path: from.path.clone(),
        }),
    }
}

#[cfg(test)]
#[path = "confined_tree_tests.rs"]
mod tests;
