//! Deleting a thread for good: its rollout file and its index entry. The file goes first, under
//! the rollout's write lock (a thread another process is writing is busy, not deleted under it);
//! the index entry after. A crash between the two leaves an entry whose file is gone, which
//! every listing already skips and the next index compaction drops; the other order could leave
//! a file that a later index repair would list again.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use super::error::RolloutError;
use super::index::ThreadIndex;
use super::lock::try_lock_exclusive;
use super::paths::{archived_dir, find_rollout, sessions_dir};

/// Removes the rollout of `thread_id` (live or archived) and its index entry; returns the path
/// removed. Blocking I/O.
pub fn delete_thread(
    home: &Path,
    index: &ThreadIndex,
    thread_id: &str,
) -> Result<PathBuf, RolloutError> {
    let path = locate_any(home, index, thread_id)?;
    let io_error = |source| RolloutError::Io {
        path: path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .open(&path)
        .map_err(io_error)?;
    if !try_lock_exclusive(&file).map_err(io_error)? {
        return Err(RolloutError::Busy(path));
    }
    std::fs::remove_file(&path).map_err(io_error)?;
    drop(file);
    index.remove(thread_id)?;
    Ok(path)
}

/// The rollout of `thread_id` wherever it lives: the index's path when the file is there, else
/// a walk of the live folder and then the archive.
fn locate_any(home: &Path, index: &ThreadIndex, thread_id: &str) -> Result<PathBuf, RolloutError> {
    if let Some(entry) = index.get(thread_id)? {
        if entry.path.is_file() {
            return Ok(entry.path);
        }
    }
    [sessions_dir(home), archived_dir(home)]
        .iter()
        .find_map(|root| find_rollout(root, thread_id))
        .ok_or_else(|| RolloutError::NotFound(thread_id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::{IndexEntry, RolloutItem, RolloutWriter, SessionMeta};
    use std::sync::Arc;

    fn meta(id: &str) -> SessionMeta {
        SessionMeta {
            id: id.to_string(),
            created_at: 100,
            cwd: "/w".to_string(),
            model: "m".to_string(),
            model_provider: "p".to_string(),
            originator: None,
            cli_version: "0".to_string(),
            forked_from_id: None,
            source: None,
            settings: None,
        }
    }

    async fn write_thread(home: &Path, index: &Arc<ThreadIndex>, id: &str) -> PathBuf {
        let path = crate::rollout::paths::rollout_path(home, id, chrono::Utc::now());
        let writer = RolloutWriter::create(&path, Some(index.clone())).unwrap();
        writer
            .append(RolloutItem::SessionMeta(meta(id)))
            .await
            .unwrap();
        writer.close().await.unwrap();
        path
    }

    #[tokio::test]
    async fn only_the_named_thread_goes_and_a_held_rollout_is_busy() {
        let home = tempfile::tempdir().unwrap();
        let index = Arc::new(ThreadIndex::new(home.path()));
        let kept = write_thread(home.path(), &index, "keep").await;
        let gone = write_thread(home.path(), &index, "gone").await;
        let kept_bytes = std::fs::read(&kept).unwrap();
        let kept_entry = index.get("keep").unwrap();

        let held = RolloutWriter::open_append(
            &gone,
            None,
            IndexEntry::from_meta(&meta("gone"), &gone, false),
        )
        .unwrap();
        assert!(matches!(
            delete_thread(home.path(), &index, "gone"),
            Err(RolloutError::Busy(_))
        ));
        assert!(gone.exists(), "a busy thread keeps its file");
        held.close().await.unwrap();

        assert_eq!(delete_thread(home.path(), &index, "gone").unwrap(), gone);
        assert!(!gone.exists());
        assert_eq!(index.get("gone").unwrap(), None);
        // A second handle (another process) reads the same.
        assert_eq!(ThreadIndex::new(home.path()).get("gone").unwrap(), None);
        assert_eq!(std::fs::read(&kept).unwrap(), kept_bytes);
        assert_eq!(index.get("keep").unwrap(), kept_entry);
        assert!(matches!(
            delete_thread(home.path(), &index, "gone"),
            Err(RolloutError::NotFound(_))
        ));
    }
}
