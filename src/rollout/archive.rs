//! Archiving moves a rollout between `sessions/` and `archived_sessions/` (keeping its
//! `YYYY/MM/DD/` subpath) and records the move in the index. The move happens while holding the
//! rollout's write lock, so a thread another process is writing cannot be archived under it.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use super::error::RolloutError;
use super::index::ThreadIndex;
use super::index_entry::IndexEntry;
use super::lock::try_lock_exclusive;
use super::paths::create_private_dirs;
use super::paths::{archived_dir, find_rollout, sessions_dir};
use super::reader::read_rollout;

/// Moves a live thread's rollout to the archive. Blocking I/O.
pub fn archive_thread(
    home: &Path,
    index: &ThreadIndex,
    thread_id: &str,
) -> Result<IndexEntry, RolloutError> {
    move_thread(home, index, thread_id, false)
}

/// Moves an archived thread's rollout back; its `updated_at` becomes now. Blocking I/O.
pub fn unarchive_thread(
    home: &Path,
    index: &ThreadIndex,
    thread_id: &str,
) -> Result<IndexEntry, RolloutError> {
    move_thread(home, index, thread_id, true)
}

fn move_thread(
    home: &Path,
    index: &ThreadIndex,
    thread_id: &str,
    from_archive: bool,
) -> Result<IndexEntry, RolloutError> {
    let (from_root, to_root) = if from_archive {
        (archived_dir(home), sessions_dir(home))
    } else {
        (sessions_dir(home), archived_dir(home))
    };
    let source = locate(index, &from_root, thread_id, from_archive)?;
    let io_error = |path: &Path, source| RolloutError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .open(&source)
        .map_err(|e| io_error(&source, e))?;
    if !try_lock_exclusive(&file).map_err(|e| io_error(&source, e))? {
        return Err(RolloutError::Busy(source));
    }
    let relative = source
        .strip_prefix(&from_root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| PathBuf::from(source.file_name().unwrap_or_default()));
    let destination = to_root.join(relative);
    if let Some(parent) = destination.parent() {
        create_private_dirs(parent).map_err(|e| io_error(parent, e))?;
    }
    let contents = read_rollout(&source)?;
    std::fs::rename(&source, &destination).map_err(|e| io_error(&source, e))?;
    drop(file);
    let mut entry = IndexEntry::from_contents(&contents, !from_archive);
    entry.path = destination;
    if from_archive {
        entry.touch(chrono::Utc::now().timestamp_millis());
    }
    index.upsert(&entry)?;
    Ok(entry)
}

/// The rollout of `thread_id` under `root`: from the index when it knows, else by a walk.
fn locate(
    index: &ThreadIndex,
    root: &Path,
    thread_id: &str,
    archived: bool,
) -> Result<PathBuf, RolloutError> {
    if let Some(entry) = index.get(thread_id)? {
        if entry.archived == archived && entry.path.exists() {
            return Ok(entry.path);
        }
    }
    find_rollout(root, thread_id).ok_or_else(|| RolloutError::NotFound(thread_id.to_string()))
}
