//! One connection's fuzzy file searches: the cancellation flags of running `fuzzyFileSearch`
//! requests (a later request with the same `cancellationToken` raises the earlier one's), and
//! the typing-as-you-go sessions (`fuzzyFileSearch/session*`).
//!
//! A session walks its roots once, when it starts, into an index; each update only ranks that
//! index, so a keystroke costs a ranking, not a walk. Updates run one at a time per session,
//! in order, and an update overtaken by a newer one before it ranks sends nothing: the client
//! hears about the query it has now. Stopping a session (or closing the connection) raises its
//! flag, which ends a walk or a ranking still running.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::core::file_search::{build_index, FileIndex, WalkLimits};

/// The most sessions one connection may hold; starting another ends the oldest.
pub(crate) const MAX_SESSIONS_PER_CONNECTION: usize = 16;

pub(crate) struct SearchSession {
    /// `Some` once the walk of the roots has finished.
    index: watch::Receiver<Option<Arc<FileIndex>>>,
    /// Raised when the session stops: ends its walk and any ranking.
    pub(crate) cancel: Arc<AtomicBool>,
    /// The newest update's number; an update whose number is older sends nothing.
    generation: AtomicU64,
    /// Serializes the updates of one session, so their notifications keep their order.
    pub(crate) serial: tokio::sync::Mutex<()>,
    started: u64,
}

impl SearchSession {
    /// Starts walking `roots` on a blocking thread.
    fn start(roots: Vec<String>, started: u64) -> SearchSession {
        let (index_tx, index_rx) = watch::channel(None);
        let cancel = Arc::new(AtomicBool::new(false));
        let walk_cancel = cancel.clone();
        tokio::task::spawn_blocking(move || {
            let index = build_index(&roots, WalkLimits::default(), &walk_cancel);
            let _ = index_tx.send(Some(Arc::new(index)));
        });
        SearchSession {
            index: index_rx,
            cancel,
            generation: AtomicU64::new(0),
            serial: tokio::sync::Mutex::new(()),
            started,
        }
    }

    /// Numbers a new update.
    pub(crate) fn next_generation(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether `generation` is still the newest update.
    pub(crate) fn is_current(&self, generation: u64) -> bool {
        self.generation.load(Ordering::SeqCst) == generation && !self.cancel.load(Ordering::SeqCst)
    }

    /// The index, once the walk is done; `None` if the walk's task went away.
    pub(crate) async fn index(&self) -> Option<Arc<FileIndex>> {
        let mut index = self.index.clone();
        let ready = index.wait_for(Option::is_some).await.ok()?;
        ready.clone()
    }
}

#[derive(Default)]
pub(crate) struct FileSearches {
    /// `cancellationToken` → the flag of the request running under it.
    tokens: Mutex<HashMap<String, Arc<AtomicBool>>>,
    sessions: Mutex<HashMap<String, Arc<SearchSession>>>,
    started: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl FileSearches {
    /// A flag for a new search; with a token, the previous search under it is cancelled.
    pub(crate) fn begin(&self, token: Option<&str>) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        if let Some(token) = token {
            if let Some(previous) = lock(&self.tokens).insert(token.to_string(), flag.clone()) {
                previous.store(true, Ordering::SeqCst);
            }
        }
        flag
    }

    /// Forgets the token of a finished search, unless a newer one took it over.
    pub(crate) fn finish(&self, token: Option<&str>, flag: &Arc<AtomicBool>) {
        if let Some(token) = token {
            let mut tokens = lock(&self.tokens);
            if tokens
                .get(token)
                .is_some_and(|held| Arc::ptr_eq(held, flag))
            {
                tokens.remove(token);
            }
        }
    }

    /// Starts (or restarts) session `session_id` over `roots`.
    pub(crate) fn start_session(&self, session_id: &str, roots: Vec<String>) {
        let started = self.started.fetch_add(1, Ordering::SeqCst);
        let session = Arc::new(SearchSession::start(roots, started));
        let mut sessions = lock(&self.sessions);
        if let Some(previous) = sessions.insert(session_id.to_string(), session) {
            previous.cancel.store(true, Ordering::SeqCst);
        }
        if sessions.len() > MAX_SESSIONS_PER_CONNECTION {
            let oldest = sessions
                .iter()
                .min_by_key(|(_, session)| session.started)
                .map(|(id, _)| id.clone());
            if let Some(session) = oldest.and_then(|id| sessions.remove(&id)) {
                session.cancel.store(true, Ordering::SeqCst);
            }
        }
    }

    pub(crate) fn session(&self, session_id: &str) -> Option<Arc<SearchSession>> {
        lock(&self.sessions).get(session_id).cloned()
    }

    /// Ends a session; an unknown id is fine (as on the reference).
    pub(crate) fn stop_session(&self, session_id: &str) {
        if let Some(session) = lock(&self.sessions).remove(session_id) {
            session.cancel.store(true, Ordering::SeqCst);
        }
    }

    /// Ends every search and session: the connection is closing.
    pub(crate) fn stop_all(&self) {
        for (_, flag) in lock(&self.tokens).drain() {
            flag.store(true, Ordering::SeqCst);
        }
        for (_, session) in lock(&self.sessions).drain() {
            session.cancel.store(true, Ordering::SeqCst);
        }
    }
}
