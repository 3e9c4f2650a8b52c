//! `fs/watch`: one connection's file watches. The connection has one inotify watcher (through
//! `notify`, made with its first watch); each watch is a kernel watch on its path plus a
//! forwarding task that turns the events routed to it into `fs/changed` notifications.
//!
//! Ownership: the connection owns its watches. A watch ends on `fs/unwatch` and, all of them,
//! when the connection closes ([`FsWatches::stop_all`] from `serve`); cancelling a watch's token
//! ends its task, and dropping the watcher stops its inotify thread. A connection holds at most
//! [`MAX_WATCHES_PER_CONNECTION`] watches.
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
pub(crate) const MAX_WATCHES_PER_CONNECTION: usize = 256;

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

/// What a watch reports: events on `watched` (a directory's direct entries, or a file),
/// narrowed to `target` and beneath when the target did not exist and its parent is watched.
#[derive(Debug, Clone)]
pub(crate) struct WatchTarget {
    pub(crate) watched: PathBuf,
    pub(crate) only: Option<PathBuf>,
}

/// One watch: where its events go until its token stops its forwarding task.
struct Route {
    target: WatchTarget,
    pending: Mutex<BTreeSet<PathBuf>>,
    wake: Notify,
    stop: CancellationToken,
}

impl Route {
    /// Takes the event paths this watch reports, and wakes its task when there are any.
    fn collect(&self, paths: &[PathBuf]) {
        let mut set = lock(&self.pending);
        for path in paths {
            if reported(&self.target, path) {
                set.insert(path.clone());
            }
        }
        if set.len() > MAX_PENDING_PATHS {
            set.clear();
            let whole = self.target.only.as_ref().unwrap_or(&self.target.watched);
            set.insert(whole.clone());
        }
        if !set.is_empty() {
            self.wake.notify_one();
        }
    }
}

/// The watches of one connection share one inotify instance (the kernel allows a user only a
/// few, 128 by default, while watches on one instance number in the hundred thousands).
#[derive(Default)]
struct WatchState {
    /// Made with the first watch; dropping it stops its thread.
    watcher: Option<notify::RecommendedWatcher>,
    /// How many watches use each kernel watch, so unwatching one keeps the others'.
    watched: HashMap<PathBuf, usize>,
}

#[derive(Default)]
pub(crate) struct FsWatches {
    /// `watchId` → its route; shared with the watcher's event handler.
    routes: Arc<Mutex<HashMap<String, Arc<Route>>>>,
    state: Mutex<WatchState>,
}

impl FsWatches {
    /// Starts watch `watch_id`, whose changes go to `outgoing` as `fs/changed`.
    pub(crate) fn start(
        &self,
        watch_id: &str,
        target: WatchTarget,
        outgoing: OutgoingSender,
    ) -> Result<(), WatchError> {
        let mut state = lock(&self.state);
        {
            let routes = lock(&self.routes);
            if routes.contains_key(watch_id) {
                return Err(WatchError::Duplicate(watch_id.to_string()));
            }
            if routes.len() >= MAX_WATCHES_PER_CONNECTION {
                return Err(WatchError::TooMany);
            }
        }
        let watch_error = |source| WatchError::Notify {
            path: target.watched.clone(),
            source,
        };
        if state.watcher.is_none() {
            let routes = self.routes.clone();
            let handler = move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                for route in lock(&routes).values() {
                    route.collect(&event.paths);
                }
            };
            state.watcher = Some(notify::recommended_watcher(handler).map_err(watch_error)?);
        }
        let WatchState { watcher, watched } = &mut *state;
        let uses = watched.entry(target.watched.clone()).or_insert(0);
        if *uses == 0 {
            if let Some(watcher) = watcher.as_mut() {
                watcher
                    .watch(&target.watched, RecursiveMode::NonRecursive)
                    .map_err(watch_error)?;
            }
        }
        *uses += 1;
        let route = Arc::new(Route {
            target,
            pending: Mutex::default(),
            wake: Notify::new(),
            stop: CancellationToken::new(),
        });
        tokio::spawn(forward(watch_id.to_string(), route.clone(), outgoing));
        lock(&self.routes).insert(watch_id.to_string(), route);
        Ok(())
    }

    /// Ends watch `watch_id`; an unknown id is fine (as on the reference).
    pub(crate) fn stop(&self, watch_id: &str) {
        let mut state = lock(&self.state);
        let Some(route) = lock(&self.routes).remove(watch_id) else {
            return;
        };
        route.stop.cancel();
        let path = &route.target.watched;
        let WatchState { watcher, watched } = &mut *state;
        if let Some(uses) = watched.get_mut(path) {
            *uses -= 1;
            if *uses == 0 {
                watched.remove(path);
                if let Some(watcher) = watcher.as_mut() {
                    // The path may be gone already, which ended the kernel watch by itself.
                    let _ = watcher.unwatch(path);
                }
            }
        }
    }

    /// Ends every watch and the connection's inotify instance: the connection is closing.
    pub(crate) fn stop_all(&self) {
        let mut state = lock(&self.state);
        for (_, route) in lock(&self.routes).drain() {
            route.stop.cancel();
        }
        state.watched.clear();
        state.watcher = None;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Whether an event's path is one this watch tells the client about: the watched file, or a
/// direct entry of the watched directory (the connection's one instance reports every watch's
/// events to every route), narrowed to `only` when set, and never a staged write's temporary.
fn reported(target: &WatchTarget, path: &Path) -> bool {
    let temporary = path
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with(TEMP_PREFIX));
    let under_watch = path == target.watched || path.parent() == Some(target.watched.as_path());
    !temporary && under_watch && target.only.as_ref().is_none_or(|only| path == only)
}

/// Sends the gathered paths as `fs/changed` each time the watcher wakes it, until stopped.
async fn forward(watch_id: String, route: Arc<Route>, outgoing: OutgoingSender) {
    loop {
        tokio::select! {
            () = route.stop.cancelled() => return,
            () = route.wake.notified() => {}
        }
        tokio::select! {
            () = route.stop.cancelled() => return,
            () = tokio::time::sleep(COALESCE) => {}
        }
        let paths = std::mem::take(&mut *lock(&route.pending));
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
