//! A thread's running commands (the model's `exec_command` sessions): the one owner that
//! keeps them, bounds them, lists them (`thread/backgroundTerminals/*`) and kills them.
//!
//! A command still running when its `exec_command` call yields stays here as a session the
//! model reaches with `write_stdin`; one still running when the turn ends (completed or
//! interrupted: an interrupt stops the model's wait, not the command) is a background
//! terminal, whose item completes whenever its process exits. Each session's process is owned
//! by one task ([`session::drive`]) tracked here, so the thread's shutdown can kill them all
//! and wait until every one is gone.
//!
//! Bound: at most [`MAX_LIVE_SESSIONS`] run at once per thread. Starting one more kills the
//! session the model used least recently (its item completes as failed, exit code -1) and the
//! model is told which. An ended session stays until the model has read its last output and
//! exit code, and at most [`MAX_ENDED_SESSIONS`] such are kept.

pub(crate) mod output;
pub(crate) mod session;

use std::sync::{Arc, Mutex};

use rand::Rng;
use tokio_util::task::TaskTracker;

use std::time::Instant;

use session::{drive, Collected, Driven, KillReason, Session};

use super::handle::TurnHandle;

/// Live sessions one thread may hold; see the module doc for what happens past it.
pub(crate) const MAX_LIVE_SESSIONS: usize = 16;
/// Ended sessions whose last output the model has not read, kept per thread.
const MAX_ENDED_SESSIONS: usize = 16;

/// The sessions of the thread `turn` runs on; `None` only for an environment that keeps none
/// (every thread does).
pub(crate) fn terminals_of(turn: &TurnHandle) -> Option<Arc<Terminals>> {
    turn.env.terminals().downcast::<Terminals>().ok()
}

/// A thread's sessions, oldest first.
#[derive(Default)]
pub(crate) struct Terminals {
    sessions: Mutex<Vec<Arc<Session>>>,
    tasks: TaskTracker,
}

impl Terminals {
    fn sessions(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Session>>> {
        // A panic while it was held leaves a plain list; keep using it.
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A session number no session of this thread has now: five digits, as the reference's.
    pub(crate) fn allocate_id(&self) -> i32 {
        let sessions = self.sessions();
        let mut rng = rand::thread_rng();
        loop {
            let id = rng.gen_range(10_000..100_000);
            if sessions.iter().all(|session| session.id != id) {
                return id;
            }
        }
    }

    /// Keeps `session` and starts the task that owns its process. Returns the id of the session
    /// killed to stay within the bound, if one was.
    pub(crate) fn add(&self, session: Arc<Session>, driven: Driven) -> Option<i32> {
        let evicted = {
            let mut sessions = self.sessions();
            let live: Vec<&Arc<Session>> = sessions.iter().filter(|s| !s.has_ended()).collect();
            let evicted = (live.len() >= MAX_LIVE_SESSIONS)
                .then(|| {
                    live.iter()
                        .min_by_key(|s| s.last_used())
                        .map(|s| (*s).clone())
                })
                .flatten();
            if let Some(victim) = &evicted {
                victim.kill(KillReason::Terminated);
                sessions.retain(|s| s.id != victim.id);
            }
            let ended = sessions.iter().filter(|s| s.has_ended()).count();
            if ended >= MAX_ENDED_SESSIONS {
                if let Some(oldest) = sessions.iter().position(|s| s.has_ended()) {
                    sessions.remove(oldest);
                }
            }
            sessions.push(session.clone());
            evicted.map(|victim| victim.id)
        };
        self.tasks.spawn(drive(session, driven));
        evicted
    }

    pub(crate) fn get(&self, id: i32) -> Option<Arc<Session>> {
        self.sessions().iter().find(|s| s.id == id).cloned()
    }

    /// Forgets an ended session once the model has read its end.
    pub(crate) fn forget(&self, id: i32) {
        self.sessions().retain(|s| s.id != id);
    }

    /// The sessions whose command still runs, oldest first.
    pub(crate) fn live(&self) -> Vec<Arc<Session>> {
        self.sessions()
            .iter()
            .filter(|s| !s.has_ended())
            .cloned()
            .collect()
    }

    /// Kills the running session named `process_id`; `false` when there is none.
    pub(crate) fn terminate(&self, process_id: &str) -> bool {
        let mut sessions = self.sessions();
        let Some(index) = sessions
            .iter()
            .position(|s| !s.has_ended() && s.id.to_string() == process_id)
        else {
            return false;
        };
        let session = sessions.remove(index);
        session.kill(KillReason::Terminated);
        true
    }

    /// Kills every running session and forgets every session.
    pub(crate) fn clean(&self) {
        for session in self.sessions().drain(..) {
            session.kill(KillReason::Terminated);
        }
    }

    /// The thread closes: kills every session and waits until their processes are gone.
    pub(crate) async fn shutdown(&self) {
        for session in self.sessions().drain(..) {
            session.kill(KillReason::Shutdown);
        }
        self.tasks.close();
        self.tasks.wait().await;
    }
}

/// Waits until `session` ended or `deadline` passed, then takes what the model has not read.
/// An ended session is forgotten once read. `None` when the turn was interrupted meanwhile:
/// as with the reference, the command keeps running as a background terminal (its item
/// completes when it exits; clients list and terminate it, the thread's end kills it).
pub(crate) async fn read_after_wait(
    turn: &TurnHandle,
    terminals: &Terminals,
    session: &Session,
    deadline: Instant,
) -> Option<Collected> {
    if !session.wait(deadline, &turn.cancel).await {
        return None;
    }
    let collected = session.collect();
    if collected.exit_code.is_some() {
        terminals.forget(session.id);
    }
    Some(collected)
}
