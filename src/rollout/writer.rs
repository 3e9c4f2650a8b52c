//! `RolloutWriter`: one writer task owns each rollout file.
//!
//! The task is async and does each write or fsync through a short `spawn_blocking` call, so an
//! idle thread holds no blocking-pool thread (the pool is bounded; thousands of loaded threads
//! must not exhaust it).
//!
//! Every line is written with a single `write(2)` of the whole line plus `\n`, so a crash leaves
//! at most one torn last line, which the reader skips. A write that fails part-way (disk full)
//! is cut back to the last complete line, so an append is all or nothing. `flush` fsyncs and
//! acknowledges.
//!
//! The writer holds an exclusive `flock` on its file for as long as it runs, so a second process
//! (or a second handle) cannot append to the same thread: opening a held rollout fails with
//! [`RolloutError::Busy`]. It also keeps the thread's [`IndexEntry`] current: the lines that change
//! what `thread/list` shows (meta, turn boundaries, names, the first user message) update the
//! shared index right after they are written.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::error::RolloutError;
use super::index::ThreadIndex;
use super::index_entry::IndexEntry;
use super::line::{RolloutItem, RolloutLine};
use super::lock::try_lock_exclusive;
use super::paths::create_private_dirs;

/// Lines queued ahead of the writer thread. Appends are awaited with an acknowledgement, so this
/// only needs to absorb bursts from one thread's turn.
const WRITER_QUEUE: usize = 256;

enum WriterCommand {
    /// Boxed: a history item can be large, and the other commands are tiny.
    Append(
        Vec<u8>,
        Box<RolloutItem>,
        oneshot::Sender<std::io::Result<()>>,
    ),
    Flush(oneshot::Sender<std::io::Result<()>>),
    /// Fsync, release the lock and stop; later appends fail with `WriterStopped`.
    Close(oneshot::Sender<std::io::Result<()>>),
    /// Delete the file and its index entry, release the lock and stop.
    Discard(oneshot::Sender<std::io::Result<()>>),
}

/// What the writer thread owns besides the file.
struct IndexState {
    index: Option<Arc<ThreadIndex>>,
    entry: Option<IndexEntry>,
    path: PathBuf,
    /// Where the last complete line ends: appends that fail are cut back to it.
    good_length: u64,
    /// The last index update failed; the entry is written again with the next line.
    index_stale: bool,
}

/// A handle to the task that owns one rollout file. Cloning shares the same writer.
#[derive(Clone, Debug)]
pub struct RolloutWriter {
    commands_tx: mpsc::Sender<WriterCommand>,
    path: PathBuf,
}

impl RolloutWriter {
    /// Creates a new rollout file (0600, folders 0700) and starts its writer. The index entry is
    /// made from the session meta line, which must be the first append.
    pub fn create(
        path: &Path,
        index: Option<Arc<ThreadIndex>>,
    ) -> Result<RolloutWriter, RolloutError> {
        let io_error = |source| RolloutError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            create_private_dirs(parent).map_err(io_error)?;
        }
        let file = private_open(path, true).map_err(|e| RolloutError::opening(path, e))?;
        if !try_lock_exclusive(&file).map_err(io_error)? {
            return Err(RolloutError::Busy(path.to_path_buf()));
        }
        Ok(RolloutWriter::start(
            file,
            path,
            IndexState {
                index,
                entry: None,
                path: path.to_path_buf(),
                good_length: 0,
                index_stale: false,
            },
        ))
    }

    /// Opens an existing rollout for appending (a resumed thread), taking its lock. A torn last
    /// line left by a crash is cut off first, so the next line does not glue onto it.
    pub fn open_append(
        path: &Path,
        index: Option<Arc<ThreadIndex>>,
        entry: IndexEntry,
    ) -> Result<RolloutWriter, RolloutError> {
        let io_error = |source| RolloutError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = private_open(path, false).map_err(|e| RolloutError::opening(path, e))?;
        if !try_lock_exclusive(&file).map_err(io_error)? {
            return Err(RolloutError::Busy(path.to_path_buf()));
        }
        let good_length = cut_torn_tail(&file, path).map_err(io_error)?;
        let state = IndexState {
            index,
            entry: Some(entry),
            path: path.to_path_buf(),
            good_length,
            index_stale: false,
        };
        Ok(RolloutWriter::start(file, path, state))
    }

    fn start(file: File, path: &Path, state: IndexState) -> RolloutWriter {
        let (commands_tx, commands_rx) = mpsc::channel(WRITER_QUEUE);
        // The task ends when every handle is dropped (the channel closes) or on `close`.
        tokio::spawn(run_writer(file, commands_rx, state));
        RolloutWriter {
            commands_tx,
            path: path.to_path_buf(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line and waits until it has been written (not fsynced).
    pub async fn append(&self, item: RolloutItem) -> Result<(), RolloutError> {
        let line = RolloutLine::now(item);
        let mut bytes = serde_json::to_vec(&line).map_err(|error| RolloutError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(error),
        })?;
        bytes.push(b'\n');
        let (ack_tx, ack_rx) = oneshot::channel();
        self.send(WriterCommand::Append(bytes, Box::new(line.item), ack_tx))
            .await?;
        self.await_ack(ack_rx).await
    }

    /// Fsyncs, releases the file's lock and stops the writer.
    pub async fn close(&self) -> Result<(), RolloutError> {
        let (ack_tx, ack_rx) = oneshot::channel();
        self.send(WriterCommand::Close(ack_tx)).await?;
        self.await_ack(ack_rx).await
    }

    /// Deletes the file and its `thread/list` entry and stops the writer: for a thread whose
    /// file would only hold turns that failed before any request left the process.
    pub async fn discard(&self) -> Result<(), RolloutError> {
        let (ack_tx, ack_rx) = oneshot::channel();
        self.send(WriterCommand::Discard(ack_tx)).await?;
        self.await_ack(ack_rx).await
    }

    /// Fsyncs everything written so far.
    pub async fn flush(&self) -> Result<(), RolloutError> {
        let (ack_tx, ack_rx) = oneshot::channel();
        self.send(WriterCommand::Flush(ack_tx)).await?;
        self.await_ack(ack_rx).await
    }

    async fn send(&self, command: WriterCommand) -> Result<(), RolloutError> {
        self.commands_tx
            .send(command)
            .await
            .map_err(|_| RolloutError::WriterStopped(self.path.clone()))
    }

    async fn await_ack(
        &self,
        ack_rx: oneshot::Receiver<std::io::Result<()>>,
    ) -> Result<(), RolloutError> {
        match ack_rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(source)) => Err(RolloutError::Io {
                path: self.path.clone(),
                source,
            }),
            Err(_) => Err(RolloutError::WriterStopped(self.path.clone())),
        }
    }
}

async fn run_writer(file: File, mut commands_rx: mpsc::Receiver<WriterCommand>, state: IndexState) {
    // The file and index state travel into each blocking call and back, so this task stays
    // their single owner and lines are written strictly in queue order.
    let mut owned = Some((file, state));
    while let Some(command) = commands_rx.recv().await {
        let Some((file, state)) = owned.take() else {
            return;
        };
        match command {
            WriterCommand::Append(bytes, item, ack) => {
                let done = blocking(move || {
                    let (mut file, mut state) = (file, state);
                    let result = write_line(&mut file, &bytes, &mut state.good_length);
                    // The index is updated before the acknowledgement, so once a caller has
                    // seen its line written (e.g. `thread/start` answered), `thread/list`
                    // shows it.
                    if result.is_ok() {
                        update_index(&mut state, &item);
                    }
                    (file, state, result)
                })
                .await;
                let Some((file, state, result)) = done else {
                    return;
                };
                owned = Some((file, state));
                let _ = ack.send(result);
            }
            WriterCommand::Flush(ack) => {
                let done = blocking(move || {
                    let result = file.sync_data();
                    (file, state, result)
                })
                .await;
                let Some((file, state, result)) = done else {
                    return;
                };
                owned = Some((file, state));
                let _ = ack.send(result);
            }
            WriterCommand::Close(ack) => {
                // Dropping the file releases the flock before the caller hears back.
                let result = blocking(move || {
                    let result = file.sync_data();
                    drop(file);
                    drop(state);
                    result
                })
                .await;
                let _ = ack
                    .send(result.unwrap_or_else(|| Err(std::io::Error::other("writer panicked"))));
                return;
            }
            WriterCommand::Discard(ack) => {
                // The file is unlinked while its lock is still held, so no other process can
                // open it for appending in between.
                let result = blocking(move || {
                    let removed = std::fs::remove_file(&state.path);
                    if let (Ok(()), Some(index), Some(entry)) =
                        (&removed, &state.index, &state.entry)
                    {
                        if let Err(error) = index.remove(&entry.id) {
                            tracing::warn!(%error, "thread index update failed");
                        }
                    }
                    drop(file);
                    removed
                })
                .await;
                let _ = ack
                    .send(result.unwrap_or_else(|| Err(std::io::Error::other("writer panicked"))));
                return;
            }
        }
    }
    if let Some((file, _)) = owned {
        let _ = blocking(move || file.sync_data()).await;
    }
}

/// Runs one short blocking file operation off the async workers; `None` if it panicked or the
/// runtime is shutting down.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}

/// Keeps the shared index in step with what was just written. Best effort: the rollout is the
/// source of truth and a lost index line is repaired by the next update or a rebuild.
fn update_index(state: &mut IndexState, item: &RolloutItem) {
    let Some(index) = &state.index else { return };
    let changed = match (item, state.entry.as_mut()) {
        (RolloutItem::SessionMeta(meta), _) => {
            state.entry = Some(IndexEntry::from_meta(meta, &state.path, false));
            true
        }
        (_, Some(entry)) => {
            let changed = entry.observe(item);
            if matches!(
                item,
                RolloutItem::TurnStarted { .. } | RolloutItem::TurnEnded { .. }
            ) {
                entry.touch(chrono::Utc::now().timestamp_millis());
            }
            changed
        }
        (_, None) => false,
    };
    // An update that failed (disk full) is retried with the next line written, so the entry
    // catches up as soon as the index can be written again.
    if let (true, Some(entry)) = (changed || state.index_stale, &state.entry) {
        state.index_stale = match index.upsert(entry) {
            Ok(()) => false,
            Err(error) => {
                tracing::warn!(%error, "thread index update failed");
                true
            }
        };
    }
}

/// Truncates the file after its last newline (the remains of a write cut short by a crash) and
/// returns the length kept.
fn cut_torn_tail(file: &File, path: &Path) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let length = file.metadata()?.len();
    if length == 0 {
        return Ok(0);
    }
    let mut reader = file;
    // Look back in bounded steps for the last '\n'.
    let mut end = length;
    let mut buffer = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buffer.len() as u64);
        let chunk = &mut buffer[..(end - start) as usize];
        reader.seek(SeekFrom::Start(start))?;
        reader.read_exact(chunk)?;
        if let Some(position) = chunk.iter().rposition(|b| *b == b'\n') {
            let keep = start + position as u64 + 1;
            if keep < length {
                tracing::warn!(path = %path.display(), cut = length - keep, "cut a torn last line");
                file.set_len(keep)?;
            }
            return Ok(keep);
        }
        end = start;
    }
    tracing::warn!(path = %path.display(), "rollout had no complete line; emptied");
    file.set_len(0)?;
    Ok(0)
}

/// Appends one whole line or nothing. One `write` call normally carries the whole line; a short
/// write (disk nearly full) is finished with further writes. When any of them fails (ENOSPC,
/// EIO), the file is cut back to `good_length`, its length before this line: the bytes that did
/// land would otherwise be a torn line in the middle of the file once the next line is glued
/// onto them, and every read of the thread would fail from then on.
///
/// `good_length` is the writer's record of where its last complete line ends. A file longer
/// than that (an earlier cut that itself failed) is cut first, so one failed repair is retried
/// instead of corrupting the next line.
fn write_line(file: &mut File, bytes: &[u8], good_length: &mut u64) -> std::io::Result<()> {
    if file.metadata()?.len() != *good_length {
        file.set_len(*good_length)?;
    }
    match write_whole(file, bytes) {
        Ok(()) => {
            *good_length += bytes.len() as u64;
            Ok(())
        }
        Err(error) => {
            if let Err(cut_error) = file.set_len(*good_length) {
                // The next append retries the cut before writing (see above).
                tracing::warn!(%cut_error, "could not cut a failed rollout append back");
            }
            Err(error)
        }
    }
}

fn write_whole(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let written = file.write(bytes)?;
    if written < bytes.len() {
        file.write_all(&bytes[written..])?;
    }
    Ok(())
}

/// Opens for appending, never through a symbolic link (see [`RolloutError::Symlink`]).
fn private_open(path: &Path, create_new: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    super::error::no_follow(options.append(true).read(true));
    if create_new {
        options.create_new(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::SessionMeta;
    use crate::wire::ResponseItem;

    #[tokio::test]
    async fn an_index_update_that_failed_is_retried_with_the_next_line() {
        let dir = tempfile::tempdir().unwrap();
        // The index's home is a plain file at first, so its lock cannot be taken.
        let index_home = dir.path().join("index_home");
        std::fs::write(&index_home, "").unwrap();
        let index = Arc::new(ThreadIndex::new(&index_home));
        let path = dir.path().join("rollout-2026-01-01T00-00-00-t1.jsonl");
        let writer = RolloutWriter::create(&path, Some(index.clone())).unwrap();
        let meta = SessionMeta {
            id: "t1".to_string(),
            created_at: 100,
            cwd: "/w".to_string(),
            model: "m".to_string(),
            model_provider: "p".to_string(),
            originator: None,
            cli_version: "0".to_string(),
            forked_from_id: None,
            source: None,
            settings: None,
        };
        writer
            .append(RolloutItem::SessionMeta(meta))
            .await
            .expect("the rollout line is written");
        // The index becomes writable; the next line changes nothing the index shows, yet the
        // entry that could not be written before is written now.
        std::fs::remove_file(&index_home).unwrap();
        std::fs::create_dir(&index_home).unwrap();
        writer
            .append(RolloutItem::ResponseItem(ResponseItem::user_text("hi")))
            .await
            .unwrap();
        let entry = index.get("t1").unwrap();
        assert_eq!(entry.map(|e| e.path), Some(path));
        writer.close().await.unwrap();
    }
}
