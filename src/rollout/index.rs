//! The thread index: one small JSONL file beside the rollouts (`$OPENTURN_HOME/thread_index.jsonl`)
//! that `thread/list` pages from, so listing never opens every rollout.
//!
//! Format: a header line (`{"openturn_thread_index": VERSION}`), then one full [`IndexEntry`] per
//! line; a later line for the same id replaces the earlier one. Several daemons share a home, so
//! writers append under an exclusive `flock` on `thread_index.lock`, one `write` per line; a
//! reader needs no lock and only consumes complete lines, so a line being appended by another
//! process is picked up on the next read. Each process keeps the folded entries in memory and
//! reads only the bytes appended since its last look; a compaction (under the lock) writes a new
//! file and renames it over the old one, which readers notice by its new inode.
//!
//! The index is rebuilt from the rollout files when it is missing, unreadable, or of another
//! version. Entries whose file has vanished are dropped by the caller that notices.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::error::RolloutError;
use super::index_entry::{bounded_text, IndexEntry, INDEX_TEXT_CHARS};
use super::lock::FileLock;
use super::paths::create_private_dirs;
use super::paths::{archived_dir, sessions_dir};
use super::reader::read_rollout;
use super::repair_state::RepairState;

/// Bump when the entry format changes: an index of another version is rebuilt.
pub const INDEX_VERSION: u32 = 1;

/// Compaction also starts once the file holds this many bytes and four times what its live
/// lines need, so a few large entries cannot grow it without bound between line-count checks.
const COMPACT_MIN_BYTES: u64 = 1024 * 1024;

#[derive(Default)]
pub(super) struct IndexCache {
    /// (device, inode) of the file the cache was read from.
    file_id: Option<(u64, u64)>,
    /// Bytes consumed (always at a line boundary).
    offset: u64,
    /// Lines folded so far, to decide when to compact.
    lines: usize,
    pub(super) entries: HashMap<String, IndexEntry>,
    /// The length of each entry's latest line and their sum: what a compacted file would hold.
    line_bytes: HashMap<String, u64>,
    live_bytes: u64,
}

impl IndexCache {
    fn insert(&mut self, mut entry: IndexEntry, line_length: u64) {
        // Lines written before names and previews were bounded are bounded as they are read, so
        // the next compaction drops their excess.
        if entry.preview.len() > INDEX_TEXT_CHARS {
            entry.preview = bounded_text(&entry.preview);
        }
        if let Some(name) = entry.name.as_mut().filter(|n| n.len() > INDEX_TEXT_CHARS) {
            *name = bounded_text(name);
        }
        let previous = self.line_bytes.insert(entry.id.clone(), line_length);
        self.live_bytes = self.live_bytes - previous.unwrap_or(0) + line_length;
        self.entries.insert(entry.id.clone(), entry);
    }

    fn needs_compaction(&self) -> bool {
        (self.lines > 256 && self.lines > 4 * self.entries.len())
            || (self.offset > COMPACT_MIN_BYTES && self.offset > 4 * self.live_bytes)
    }
}

/// A process's view of the shared index.
pub struct ThreadIndex {
    pub(super) home: PathBuf,
    cache: Mutex<IndexCache>,
    /// What [`ThreadIndex::reconcile`] remembers between listings (see `index_repair`).
    pub(super) repair: Mutex<RepairState>,
}

impl ThreadIndex {
    pub fn new(home: &Path) -> ThreadIndex {
        ThreadIndex {
            home: home.to_path_buf(),
            cache: Mutex::new(IndexCache::default()),
            repair: Mutex::new(RepairState::default()),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.home.join("thread_index.jsonl")
    }

    pub(super) fn lock_path(&self) -> PathBuf {
        self.home.join("thread_index.lock")
    }

    pub(super) fn cache(&self) -> MutexGuard<'_, IndexCache> {
        match self.cache.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(super) fn io_error(&self, source: std::io::Error) -> RolloutError {
        RolloutError::Io {
            path: self.path(),
            source,
        }
    }

    /// Runs `read` over the current entries (refreshed from disk first). Blocking I/O.
    ///
    /// Lock order everywhere is the file lock, then the cache mutex: a rebuild therefore lets go
    /// of the cache before waiting for the file lock.
    pub fn query<R>(
        &self,
        read: impl FnOnce(&HashMap<String, IndexEntry>) -> R,
    ) -> Result<R, RolloutError> {
        {
            let mut cache = self.cache();
            if let TailState::Current = self.read_tail(&mut cache)? {
                return Ok(read(&cache.entries));
            }
        }
        let _lock = FileLock::exclusive(&self.lock_path()).map_err(|e| self.io_error(e))?;
        let mut cache = self.cache();
        self.refresh_locked(&mut cache)?;
        Ok(read(&cache.entries))
    }

    pub fn get(&self, thread_id: &str) -> Result<Option<IndexEntry>, RolloutError> {
        self.query(|entries| entries.get(thread_id).cloned())
    }

    /// Records `entry` (replacing any earlier line for its id). Blocking I/O under the lock.
    pub fn upsert(&self, entry: &IndexEntry) -> Result<(), RolloutError> {
        let _lock = FileLock::exclusive(&self.lock_path()).map_err(|e| self.io_error(e))?;
        let mut cache = self.cache();
        self.refresh_locked(&mut cache)?;
        self.append_locked(&mut cache, entry)
    }

    /// Appends one entry line; the file lock is held and the cache is current.
    pub(super) fn append_locked(
        &self,
        cache: &mut IndexCache,
        entry: &IndexEntry,
    ) -> Result<(), RolloutError> {
        let mut line = serde_json::to_vec(entry).map_err(|e| self.io_error(e.into()))?;
        line.push(b'\n');
        let mut file = open_append(&self.path()).map_err(|e| self.io_error(e))?;
        let length_before = file.metadata().map_err(|e| self.io_error(e))?.len();
        // One write per line: with O_APPEND and the lock held, lines never interleave. A write
        // that fails part-way (disk full) is cut back, so the next line is not glued onto it.
        if let Err(error) = file.write_all(&line) {
            if let Err(cut_error) = file.set_len(length_before) {
                tracing::warn!(%cut_error, "could not cut a failed index append back");
            }
            return Err(self.io_error(error));
        }
        self.refresh_locked(cache)?;
        if cache.needs_compaction() {
            self.write_fresh(cache, None)?;
        }
        Ok(())
    }

    /// Drops the entry of a thread whose rollout is gone.
    pub fn remove(&self, thread_id: &str) -> Result<(), RolloutError> {
        let _lock = FileLock::exclusive(&self.lock_path()).map_err(|e| self.io_error(e))?;
        let mut cache = self.cache();
        self.refresh_locked(&mut cache)?;
        if cache.entries.contains_key(thread_id) {
            self.write_fresh(&mut cache, Some(thread_id))?;
        }
        Ok(())
    }

    /// Reads what other processes appended, rebuilding when the file is missing or unusable.
    /// The file lock is held.
    pub(super) fn refresh_locked(&self, cache: &mut IndexCache) -> Result<(), RolloutError> {
        match self.read_tail(cache)? {
            TailState::Current => Ok(()),
            TailState::NeedsRebuild => self.rebuild(cache),
        }
    }

    fn read_tail(&self, cache: &mut IndexCache) -> Result<TailState, RolloutError> {
        let mut file = match File::open(self.path()) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TailState::NeedsRebuild)
            }
            Err(e) => return Err(self.io_error(e)),
        };
        let metadata = file.metadata().map_err(|e| self.io_error(e))?;
        if metadata.len() == 0 {
            return Ok(TailState::NeedsRebuild);
        }
        let file_id = file_identity(&metadata);
        if cache.file_id != Some(file_id) || metadata.len() < cache.offset {
            *cache = IndexCache {
                file_id: Some(file_id),
                ..IndexCache::default()
            };
        }
        if metadata.len() == cache.offset {
            return Ok(TailState::Current);
        }
        file.seek(SeekFrom::Start(cache.offset))
            .map_err(|e| self.io_error(e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| self.io_error(e))?;
        // Only whole lines: a line still being appended is read next time.
        let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
            return Ok(TailState::Current);
        };
        for line in bytes[..end].split(|b| *b == b'\n') {
            if cache.offset == 0 && cache.lines == 0 {
                if !is_current_header(line) {
                    return Ok(TailState::NeedsRebuild);
                }
            } else if let Ok(entry) = serde_json::from_slice::<IndexEntry>(line) {
                cache.insert(entry, line.len() as u64 + 1);
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                tracing::warn!(index = %self.path().display(), "skipped an unreadable index line");
            }
            cache.lines += 1;
        }
        cache.offset += end as u64 + 1;
        Ok(TailState::Current)
    }

    /// Scans every rollout once and writes a fresh index. Only when the index is missing or
    /// unusable; the lock is held.
    fn rebuild(&self, cache: &mut IndexCache) -> Result<(), RolloutError> {
        tracing::info!(index = %self.path().display(), "rebuilding the thread index from rollouts");
        let mut entries = HashMap::new();
        for (root, archived) in [
            (sessions_dir(&self.home), false),
            (archived_dir(&self.home), true),
        ] {
            for path in rollout_files(&root) {
                // A file another process just created may not have its meta line yet; its
                // writer adds the entry once it has.
                if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
                    continue;
                }
                match read_rollout(&path) {
                    Ok(contents) => {
                        let entry = IndexEntry::from_contents(&contents, archived);
                        entries.insert(entry.id.clone(), entry);
                    }
                    Err(error) => tracing::warn!(%error, "rollout left out of the index"),
                }
            }
        }
        cache.entries = entries;
        self.write_fresh(cache, None)
    }

    /// Writes the cache's entries (minus `without`) as a new file and renames it into place.
    fn write_fresh(
        &self,
        cache: &mut IndexCache,
        without: Option<&str>,
    ) -> Result<(), RolloutError> {
        if let Some(id) = without {
            cache.entries.remove(id);
        }
        cache.line_bytes.clear();
        cache.live_bytes = 0;
        create_private_dirs(&self.home).map_err(|e| self.io_error(e))?;
        let mut bytes =
            serde_json::to_vec(&serde_json::json!({ "openturn_thread_index": INDEX_VERSION }))
                .map_err(|e| self.io_error(e.into()))?;
        bytes.push(b'\n');
        let mut sorted: Vec<&IndexEntry> = cache.entries.values().collect();
        sorted.sort_by(|a, b| a.id.cmp(&b.id));
        let mut line_bytes = HashMap::with_capacity(sorted.len());
        for entry in sorted {
            let start = bytes.len();
            serde_json::to_writer(&mut bytes, entry).map_err(|e| self.io_error(e.into()))?;
            bytes.push(b'\n');
            line_bytes.insert(entry.id.clone(), (bytes.len() - start) as u64);
        }
        cache.live_bytes = line_bytes.values().sum();
        cache.line_bytes = line_bytes;
        let temp = self
            .home
            .join(format!("thread_index.jsonl.tmp-{}", std::process::id()));
        let written = private_create(&temp).and_then(|mut file| {
            file.write_all(&bytes)?;
            file.sync_data()
        });
        if let Err(error) = written.and_then(|()| std::fs::rename(&temp, self.path())) {
            // A half-written copy (disk full) must not stay behind taking space.
            let _ = std::fs::remove_file(&temp);
            return Err(self.io_error(error));
        }
        let metadata = std::fs::metadata(self.path()).map_err(|e| self.io_error(e))?;
        cache.file_id = Some(file_identity(&metadata));
        cache.offset = bytes.len() as u64;
        cache.lines = cache.entries.len() + 1;
        Ok(())
    }
}

enum TailState {
    Current,
    NeedsRebuild,
}

fn is_current_header(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| {
            v.get("openturn_thread_index")
                .and_then(serde_json::Value::as_u64)
        })
        == Some(u64::from(INDEX_VERSION))
}

#[cfg(unix)]
fn file_identity(metadata: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn file_identity(metadata: &std::fs::Metadata) -> (u64, u64) {
    (0, metadata.len())
}

fn open_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn private_create(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Every `rollout-*.jsonl` under `root` (the tree is YYYY/MM/DD, so the walk is bounded).
/// Symbolic links to folders are not followed; a linked file is listed, and refused when read.
pub fn rollout_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                stack.push(path);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
            {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::{RolloutItem, RolloutWriter, SessionMeta};
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

    fn entry(home: &Path, id: &str) -> IndexEntry {
        IndexEntry::from_meta(&meta(id), &home.join(format!("{id}.jsonl")), false)
    }

    #[test]
    fn another_handles_appends_are_seen_and_the_latest_line_per_thread_wins() {
        let home = tempfile::tempdir().unwrap();
        // Two handles stand for two processes: each keeps its own cache.
        let writer = ThreadIndex::new(home.path());
        let reader = ThreadIndex::new(home.path());
        writer.upsert(&entry(home.path(), "a")).unwrap();
        assert_eq!(reader.query(|e| e.len()).ok(), Some(1));
        let mut renamed = entry(home.path(), "a");
        renamed.name = Some("new".to_string());
        writer.upsert(&renamed).unwrap();
        writer.upsert(&entry(home.path(), "b")).unwrap();
        let seen = reader.get("a").unwrap();
        assert_eq!(seen.and_then(|e| e.name).as_deref(), Some("new"));
        assert_eq!(reader.query(|e| e.len()).ok(), Some(2));
    }

    #[test]
    fn compaction_rewrites_the_file_and_other_handles_reload_it() {
        let home = tempfile::tempdir().unwrap();
        let writer = ThreadIndex::new(home.path());
        let reader = ThreadIndex::new(home.path());
        let mut updated = entry(home.path(), "a");
        for n in 0..300 {
            updated.touch(n * 1000);
            writer.upsert(&updated).unwrap();
            if n == 10 {
                assert_eq!(reader.query(|e| e.len()).ok(), Some(1));
            }
        }
        let lines = std::fs::read_to_string(writer.path())
            .unwrap_or_default()
            .lines()
            .count();
        assert!(lines < 300, "the log was compacted: {lines} lines");
        let seen = reader.get("a").unwrap();
        assert_eq!(seen.map(|e| e.updated_at_ms), Some(299_000));
    }

    #[test]
    fn a_few_large_entries_are_compacted_by_size_not_only_by_line_count() {
        let home = tempfile::tempdir().unwrap();
        let index = ThreadIndex::new(home.path());
        // The working folder is not bounded like the name: 100 KB lines, far below the
        // line-count threshold, must still not pile up.
        let mut large = entry(home.path(), "a");
        large.cwd = "d".repeat(100_000);
        for n in 0..40 {
            large.touch(200_000 + n * 1000);
            index.upsert(&large).unwrap();
        }
        let size = std::fs::metadata(index.path())
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(size < 1_100_000, "compacted by size: {size} bytes");
        let seen = index.get("a").unwrap();
        assert_eq!(seen.map(|e| e.updated_at_ms), Some(239_000));
    }

    #[tokio::test]
    async fn writers_keep_the_index_current_and_a_missing_index_is_rebuilt() {
        let home = tempfile::tempdir().unwrap();
        let index = Arc::new(ThreadIndex::new(home.path()));
        let path = crate::rollout::paths::rollout_path(home.path(), "t1", chrono::Utc::now());
        let writer = RolloutWriter::create(&path, Some(index.clone())).unwrap();
        let append = |item| writer.append(item);
        append(RolloutItem::SessionMeta(meta("t1"))).await.unwrap();
        append(RolloutItem::TurnItem {
            turn_id: "u".to_string(),
            item: serde_json::json!({"type": "user_message", "id": "i", "content": [{"type": "text", "text": "hello"}]}),
            started_at_ms: None,
            completed_at_ms: None,
        })
        .await
        .unwrap();
        append(RolloutItem::ThreadName {
            name: "named".to_string(),
        })
        .await
        .unwrap();
        let seen = index.get("t1").unwrap().expect("missing");
        assert_eq!(
            (seen.preview.as_str(), seen.name.as_deref()),
            ("hello", Some("named"))
        );
        // A second handle cannot take the rollout's write lock.
        assert!(matches!(
            RolloutWriter::open_append(&path, None, seen.clone()),
            Err(RolloutError::Busy(_))
        ));
        writer.close().await.unwrap();
        std::fs::remove_file(index.path()).unwrap();
        let fresh = ThreadIndex::new(home.path());
        let rebuilt = fresh.get("t1").unwrap().expect("missing");
        assert_eq!(
            (rebuilt.preview.as_str(), rebuilt.name.as_deref()),
            ("hello", Some("named"))
        );
    }
}
