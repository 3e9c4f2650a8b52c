//! Repairing the thread index from the rollout files without a rebuild: a thread whose index
//! line was lost (a full disk, a crash between the rollout line and the index line, another
//! daemon's failed append) has a complete rollout the index never heard of.
//! [`ThreadIndex::reconcile`] finds such files and indexes them; `thread/list` calls it.
//!
//! Listing must stay cheap with thousands of threads, so a folder whose listing was fully
//! indexed is remembered with its modification time and not listed again until that changes
//! (creating, renaming or removing a file in it does). A folder changed in the last
//! [`SETTLE`] is always listed again: its time may not yet reflect a file created in the same
//! clock tick. A folder holding a file that could not be indexed (still empty, unreadable) is
//! not remembered, so the file is retried at the next listing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::error::RolloutError;
use super::index::ThreadIndex;
use super::index_entry::IndexEntry;
use super::lock::FileLock;
use super::paths::{archived_dir, sessions_dir};
use super::reader::read_rollout;
use super::repair_state::ScannedDir;

/// How long a folder must have stayed unchanged before its listing is trusted.
const SETTLE: Duration = Duration::from_secs(2);

/// One pass over a rollout tree: the files of the folders that were listed, and the listings
/// that may be remembered once their files are indexed.
#[derive(Default)]
struct Walk {
    files: Vec<(PathBuf, bool)>,
    listed: HashMap<PathBuf, ScannedDir>,
}

impl ThreadIndex {
    /// Indexes every rollout file the index has no entry for, without rebuilding the index.
    /// Costs a `stat` per folder; only folders that changed are listed, and only files missing
    /// from the index are read. Blocking I/O.
    pub fn reconcile(&self) -> Result<(), RolloutError> {
        // Held throughout: concurrent listings wait here instead of repeating the walk. Lock
        // order: this, then the index's file lock, then its cache.
        let mut repair = match self.repair.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut walk = Walk::default();
        for (root, archived) in [
            (sessions_dir(&self.home), false),
            (archived_dir(&self.home), true),
        ] {
            walk_changed(&root, archived, &repair.scanned, &mut walk);
        }
        let files = std::mem::take(&mut walk.files);
        let missing: Vec<(PathBuf, bool)> = self.query(|entries| {
            files
                .into_iter()
                .filter(|(path, _)| thread_id_of(path).is_none_or(|id| !entries.contains_key(id)))
                .collect()
        })?;
        for (path, archived) in missing {
            if !self.index_missed(&path, archived, &mut repair.unreadable)? {
                // Not indexed yet: list its folder again next time.
                if let Some(dir) = path.parent() {
                    walk.listed.remove(dir);
                }
            }
        }
        repair.scanned.extend(walk.listed);
        Ok(())
    }

    /// Indexes one rollout the index has no entry for; false when it could not be (yet).
    fn index_missed(
        &self,
        path: &Path,
        archived: bool,
        unreadable: &mut HashMap<PathBuf, u64>,
    ) -> Result<bool, RolloutError> {
        let Ok(length) = std::fs::symlink_metadata(path).map(|m| m.len()) else {
            return Ok(true); // Gone since the walk: nothing to index.
        };
        // An empty file is a thread being created: its writer indexes it once its meta line
        // is written (or the next listing does).
        if length == 0 || unreadable.get(path) == Some(&length) {
            return Ok(false);
        }
        let entry = match read_rollout(path) {
            Ok(contents) => IndexEntry::from_contents(&contents, archived),
            Err(error) => {
                tracing::warn!(%error, "rollout left out of the index");
                unreadable.insert(path.to_path_buf(), length);
                return Ok(false);
            }
        };
        unreadable.remove(path);
        let _lock = FileLock::exclusive(&self.lock_path()).map_err(|e| self.io_error(e))?;
        let mut cache = self.cache();
        self.refresh_locked(&mut cache)?;
        // The thread's writer may have indexed it meanwhile; its entry is the newer one.
        if !cache.entries.contains_key(&entry.id) {
            tracing::info!(path = %path.display(), "indexed a rollout the index had missed");
            self.append_locked(&mut cache, &entry)?;
        }
        Ok(true)
    }
}

/// Adds to `walk` the rollout files of every folder under `root` that changed since it was
/// last scanned. The tree is YYYY/MM/DD, so the walk is bounded; links to folders are not
/// followed.
fn walk_changed(
    root: &Path,
    archived: bool,
    scanned: &HashMap<PathBuf, ScannedDir>,
    walk: &mut Walk,
) {
    let now = SystemTime::now();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(modified) = std::fs::metadata(&dir).and_then(|m| m.modified()) else {
            continue;
        };
        if let Some(known) = scanned.get(&dir).filter(|known| known.modified == modified) {
            stack.extend(known.subdirs.iter().cloned());
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                subdirs.push(path);
            } else if is_rollout_name(&path) {
                walk.files.push((path, archived));
            }
        }
        stack.extend(subdirs.iter().cloned());
        let settled = now.duration_since(modified).is_ok_and(|age| age >= SETTLE);
        if settled {
            walk.listed.insert(dir, ScannedDir { modified, subdirs });
        }
    }
}

fn is_rollout_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The thread id in a rollout file's name (`rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`).
fn thread_id_of(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    // The time is 19 characters, then '-'.
    rest.get(20..).filter(|id| !id.is_empty())
}
