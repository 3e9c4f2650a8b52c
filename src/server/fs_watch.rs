//! `fs/watch`: one connection's file watches. Each watch is an inotify watcher (through
//! `notify`) plus a forwarding task that turns its events into `fs/changed` notifications.
//!
//! Ownership: the connection owns its watches. A watch ends on `fs/unwatch` and, all of them,
//! when the connection closes ([`FsWatches::stop_all`] from `serve`); dropping the watcher stops
//! its inotify thread and cancelling its token ends its task. A connection holds at most
//! [`MAX_WATCHES_PER_CONNECTION`], since each costs a thread and kernel watch slots.
//!
//! As on the reference, a directory watch reports changes to the directory's direct entries,
//! not deeper. Events are gathered for [`COALESCE`] and sent as one notification with each
//! path once; the confined writer's temporary files (written beside a file, then renamed over
//! it) are left out, so a client hears about the file it wrote, not the steps.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::protocol::fs::FsChangedNotification;
use crate::protocol::notification::ServerNotification;
use crate::sandbox::TEMP_PREFIX;

use super::outgoing::OutgoingSender;

/// The most watches one connection may hold at once.
pub(crate) const MAX_WATCHES_PER_CONNECTION: usize = 64;

/// How long events are gathered before one `fs/changed` goes out: a save is several kernel
/// events (create, write, rename) that a client wants to hear as one change.
const COALESCE: Duration = Duration::from_millis(50);

/// Past this many distinct paths waiting to be reported, the notification names the watched
/// path instead of each one, so a burst cannot grow the set without bound.
const MAX_PENDING_PATHS: usize = 1_000;

/// Why a watch was not started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WatchError {
    #[error("watchId already exists: {0}")]
    Duplicate(String),
    #[error(
        "this connection already holds {MAX_WATCHES_PER_CONNECTION} watches; unwatch one first"
    )]
    TooMany,
    #[error("cannot watch `{path}`: {source}")]
    Notify {
        path: PathBuf,
        #[source]
        source: notify::Error,
    },
}

/// One running watch: dropping the watcher stops the kernel watch; the token stops the task.
struct WatchEntry {
    _watcher: notify::RecommendedWatcher,
    stop: CancellationToken,
}

/// What a watch reports: events on `watched` (a directory's direct entries, or a file),
/// narrowed to `target` and beneath when the target did not exist and its parent is watched.
#[derive(Debug, Clone)]
pub(crate) struct WatchTarget {
    pub(crate) watched: PathBuf,
    pub(crate) only: Option<PathBuf>,
}

#[derive(Default)]
pub(crate) struct FsWatches {
    entries: Mutex<HashMap<String, WatchEntry>>,
}

impl FsWatches {
    fn entries(&self) -> MutexGuard<'_, HashMap<String, WatchEntry>> {
        match self.entries.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Starts watch `watch_id`, whose changes go to `outgoing` as `fs/changed`.
    pub(crate) fn start(
        &self,
        watch_id: &str,
        target: WatchTarget,
        outgoing: OutgoingSender,
    ) -> Result<(), WatchError> {
        let mut entries = self.entries();
        if entries.contains_key(watch_id) {
            return Err(WatchError::Duplicate(watch_id.to_string()));
        }
        if entries.len() >= MAX_WATCHES_PER_CONNECTION {
            return Err(WatchError::TooMany);
        }
        let pending: Arc<Mutex<BTreeSet<PathBuf>>> = Arc::default();
        let wake = Arc::new(Notify::new());
        let handler = {
            let (pending, wake, target) = (pending.clone(), wake.clone(), target.clone());
            move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                let mut set = lock(&pending);
                for path in event.paths {
                    if reported(&target, &path) {
                        set.insert(path);
                    }
                }
                if set.len() > MAX_PENDING_PATHS {
                    set.clear();
                    set.insert(
                        target
                            .only
                            .clone()
                            .unwrap_or_else(|| target.watched.clone()),
                    );
                }
                if !set.is_empty() {
                    wake.notify_one();
                }
            }
        };
        let watch_error = |source| WatchError::Notify {
            path: target.watched.clone(),
            source,
        };
        let mut watcher = notify::recommended_watcher(handler).map_err(watch_error)?;
        watcher
            .watch(&target.watched, RecursiveMode::NonRecursive)
            .map_err(watch_error)?;
        let stop = CancellationToken::new();
        tokio::spawn(forward(
            watch_id.to_string(),
            pending,
            wake,
            stop.clone(),
            outgoing,
        ));
        entries.insert(
            watch_id.to_string(),
            WatchEntry {
                _watcher: watcher,
                stop,
            },
        );
        Ok(())
    }

    /// Ends watch `watch_id`; an unknown id is fine (as on the reference).
    pub(crate) fn stop(&self, watch_id: &str) {
        if let Some(entry) = self.entries().remove(watch_id) {
            entry.stop.cancel();
        }
    }

    /// Ends every watch: the connection is closing.
    pub(crate) fn stop_all(&self) {
        for (_, entry) in self.entries().drain() {
            entry.stop.cancel();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Whether an event's path is one this watch tells the client about.
fn reported(target: &WatchTarget, path: &Path) -> bool {
    let temporary = path
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with(TEMP_PREFIX));
    !temporary
        && target
            .only
            .as_ref()
            .is_none_or(|only| path.starts_with(only))
}

/// Sends the gathered paths as `fs/changed` each time the watcher wakes it, until stopped.
async fn forward(
    watch_id: String,
    pending: Arc<Mutex<BTreeSet<PathBuf>>>,
    wake: Arc<Notify>,
    stop: CancellationToken,
    outgoing: OutgoingSender,
) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = wake.notified() => {}
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(COALESCE) => {}
        }
        let paths = std::mem::take(&mut *lock(&pending));
        if paths.is_empty() {
            continue;
        }
        let notification = ServerNotification::FsChanged(FsChangedNotification {
            watch_id: watch_id.clone(),
            changed_paths: paths
                .into_iter()
                .map(|path| path.to_string_lossy().into_owned())
                .collect(),
        });
        if outgoing.send_notification(&notification).await.is_err() {
            return;
        }
    }
}
