//! The turn as a state machine that ends exactly once. A [`TurnEnd`] is created when the turn is
//! launched, before its task first runs, and moves into that task; ending consumes it (so a
//! second end does not compile), and dropping it without an end — a panic or an abort anywhere
//! in the task, even before the turn began — still emits one `TurnEnded` (failed), frees the
//! thread's slot and releases a turn queued behind this one. Every path out of a turn therefore
//! produces exactly one terminal event, and nothing queued behind it waits forever.
//!
//! The turn's clock starts when the turn begins ([`TurnEnd::begin`]), not while it waits behind
//! another, and stops once, in [`TurnEnd::stop`]: the rollout's end line and the terminal event
//! carry the same completion time and duration, so `thread/read` reports what `turn/completed`
//! did.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::clock::now_unix_seconds;
use super::super::error::{TurnError, TurnErrorKind};
use super::super::event::{EventMsg, TurnOutcome};
use super::super::ids::TurnId;
use super::super::thread::Thread;

/// Ends a turn. See the module docs.
pub(crate) struct TurnEnd {
    turn_id: TurnId,
    started_at: i64,
    clock: Instant,
    /// Whether `TurnStarted` went out ([`TurnEnd::begin`]).
    began: bool,
    /// Whether the terminal event went out.
    ended: bool,
    /// The terminal event while `end` waits for room to send it: delivered by the guard if
    /// the task is torn down meanwhile.
    pending: Option<EventMsg>,
    events_tx: mpsc::Sender<EventMsg>,
    /// Frees the thread's active-turn slot; `None` once used.
    thread: Option<Arc<Thread>>,
    /// Cancelled after the terminal event is sent, releasing a turn queued behind this one.
    finished: CancellationToken,
    /// The completion time and duration, fixed by the first [`TurnEnd::stop`].
    stopped: Option<TurnTimes>,
}

/// When a turn completed (Unix seconds) and how long it ran (milliseconds, measured on a
/// monotonic clock, not derived from the whole-second timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TurnTimes {
    pub completed_at: i64,
    pub duration_ms: i64,
}

impl TurnEnd {
    pub(crate) fn new(
        turn_id: TurnId,
        events_tx: mpsc::Sender<EventMsg>,
        thread: Option<Arc<Thread>>,
        finished: CancellationToken,
    ) -> TurnEnd {
        TurnEnd {
            turn_id,
            started_at: now_unix_seconds(),
            clock: Instant::now(),
            began: false,
            ended: false,
            pending: None,
            events_tx,
            thread,
            finished,
            stopped: None,
        }
    }

    /// The turn begins: its clock starts and `TurnStarted` goes out. Returns the start time.
    pub(crate) async fn begin(&mut self) -> i64 {
        self.started_at = now_unix_seconds();
        self.clock = Instant::now();
        self.began = true;
        let started = EventMsg::TurnStarted {
            turn_id: self.turn_id.clone(),
            started_at: self.started_at,
        };
        if self.events_tx.send(started).await.is_err() {
            tracing::debug!(turn_id = %self.turn_id, "event receiver gone at turn start");
        }
        self.started_at
    }

    /// Stops the turn's clock (once; later calls return the same times).
    pub(crate) fn stop(&mut self) -> TurnTimes {
        *self.stopped.get_or_insert_with(|| TurnTimes {
            completed_at: now_unix_seconds(),
            duration_ms: i64::try_from(self.clock.elapsed().as_millis()).unwrap_or(i64::MAX),
        })
    }

    /// The terminal event for `outcome`; frees the thread's active slot first, so the next
    /// `turn/start` after `turn/completed` starts a new turn.
    fn terminal_event(&mut self, outcome: TurnOutcome) -> EventMsg {
        if let Some(thread) = self.thread.take() {
            thread.turn_ended(&self.turn_id, Some(&outcome));
        }
        let times = self.stop();
        EventMsg::TurnEnded {
            turn_id: self.turn_id.clone(),
            outcome,
            started_at: self.started_at,
            completed_at: times.completed_at,
            duration_ms: times.duration_ms,
        }
    }

    /// The events of a turn that stopped without ending: a start, when it died before it began
    /// (so its end follows a start), then its end as failed.
    fn failed_end(&mut self) -> Vec<EventMsg> {
        tracing::error!(turn_id = %self.turn_id, "turn dropped without ending; ending it as failed");
        let error = TurnError {
            message: "the turn stopped unexpectedly".to_string(),
            kind: TurnErrorKind::Other,
            details: None,
        };
        let mut events = Vec::new();
        if !self.began {
            events.push(EventMsg::TurnStarted {
                turn_id: self.turn_id.clone(),
                started_at: self.started_at,
            });
        }
        events.push(self.terminal_event(TurnOutcome::Failed(error)));
        events
    }

    /// Emits the one terminal event. Consumes the guard.
    pub(crate) async fn end(mut self, outcome: TurnOutcome) {
        // Kept in the guard while waiting for room: torn down meanwhile, the guard delivers this
        // event rather than a second one.
        self.pending = Some(self.terminal_event(outcome));
        match self.events_tx.reserve().await {
            Ok(permit) => {
                if let Some(event) = self.pending.take() {
                    permit.send(event);
                }
            }
            Err(_) => {
                self.pending = None;
                tracing::debug!(turn_id = %self.turn_id, "event receiver gone at turn end");
            }
        }
        self.ended = true;
        self.finished.cancel();
    }
}

impl Drop for TurnEnd {
    fn drop(&mut self) {
        if self.ended {
            // Ended, or dropped while `end` waited to deliver: release what waits behind it.
            self.finished.cancel();
            return;
        }
        let events = match self.pending.take() {
            // Torn down while `end` waited for room: its own event still goes out.
            Some(event) => vec![event],
            None => self.failed_end(),
        };
        self.ended = true;
        let finished = self.finished.clone();
        let mut events = events.into_iter();
        while let Some(event) = events.next() {
            match self.events_tx.try_send(event) {
                Ok(()) => continue,
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    tracing::debug!(turn_id = %self.turn_id, "event receiver gone at turn end");
                    finished.cancel();
                    return;
                }
                Err(mpsc::error::TrySendError::Full(event)) => {
                    deliver_later(&self.events_tx, &self.turn_id, event, events, finished);
                    return;
                }
            }
        }
        finished.cancel();
    }
}

/// A full queue (a slow client) must not lose the turn's last events: a task waits for room,
/// and only then releases the turn queued behind this one, as `end` does.
fn deliver_later(
    events_tx: &mpsc::Sender<EventMsg>,
    turn_id: &TurnId,
    first: EventMsg,
    rest: impl Iterator<Item = EventMsg> + Send + 'static,
    finished: CancellationToken,
) {
    let (events_tx, turn_id) = (events_tx.clone(), turn_id.clone());
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                for event in std::iter::once(first).chain(rest) {
                    if events_tx.send(event).await.is_err() {
                        tracing::debug!(%turn_id, "event receiver gone at turn end");
                        break;
                    }
                }
                finished.cancel();
            });
        }
        Err(_) => {
            // No runtime left means the daemon is exiting: nobody is left to read it.
            tracing::warn!(%turn_id, "could not deliver the failed turn end");
            finished.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::record::TurnEndStatus;

    fn ended(events: &mut mpsc::Receiver<EventMsg>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let EventMsg::TurnEnded { outcome, .. } = event {
                out.push(TurnEndStatus::from(&outcome).as_str().to_string());
            }
        }
        out
    }

    #[tokio::test]
    async fn a_turn_ends_exactly_once_when_ended() {
        let (events_tx, mut events_rx) = mpsc::channel(8);
        let end = TurnEnd::new("t".into(), events_tx, None, CancellationToken::new());
        end.end(TurnOutcome::Interrupted).await;
        assert_eq!(ended(&mut events_rx), vec!["interrupted"]);
    }

    #[tokio::test]
    async fn a_turn_dropped_without_an_end_still_ends_once_as_failed() {
        let (events_tx, mut events_rx) = mpsc::channel(8);
        let task = tokio::spawn(async move {
            let mut end = TurnEnd::new("t".into(), events_tx, None, CancellationToken::new());
            end.begin().await;
            panic!("tool crashed");
        });
        assert!(task.await.is_err());
        assert!(matches!(
            events_rx.try_recv(),
            Ok(EventMsg::TurnStarted { .. })
        ));
        assert_eq!(ended(&mut events_rx), vec!["failed"]);
    }

    #[tokio::test]
    async fn a_turn_dropped_while_the_event_queue_is_full_still_delivers_its_end() {
        let (events_tx, mut events_rx) = mpsc::channel(2);
        let finished = CancellationToken::new();
        let mut end = TurnEnd::new("t".into(), events_tx.clone(), None, finished.clone());
        end.begin().await;
        // A slow client: the queue is full when the turn dies.
        assert!(events_tx
            .try_send(EventMsg::Warning {
                message: "queued".into()
            })
            .is_ok());
        let task = tokio::spawn(async move {
            let _end = end;
            panic!("tool crashed");
        });
        assert!(task.await.is_err());
        assert!(
            !finished.is_cancelled(),
            "the next turn is released only once the end is delivered"
        );
        assert!(matches!(
            events_rx.recv().await,
            Some(EventMsg::TurnStarted { .. })
        ));
        assert!(matches!(
            events_rx.recv().await,
            Some(EventMsg::Warning { .. })
        ));
        let end = tokio::time::timeout(std::time::Duration::from_secs(5), events_rx.recv()).await;
        assert!(
            matches!(
                &end,
                Ok(Some(EventMsg::TurnEnded {
                    outcome: TurnOutcome::Failed(_),
                    ..
                }))
            ),
            "{end:?}"
        );
        tokio::time::timeout(std::time::Duration::from_secs(5), finished.cancelled())
            .await
            .expect("the turn's finish was never signalled");
    }

    #[tokio::test]
    async fn a_turn_torn_down_before_it_began_still_starts_ends_and_releases_the_next() {
        let (events_tx, mut events_rx) = mpsc::channel(8);
        let finished = CancellationToken::new();
        drop(TurnEnd::new("t".into(), events_tx, None, finished.clone()));
        assert!(matches!(
            events_rx.try_recv(),
            Ok(EventMsg::TurnStarted { .. })
        ));
        assert_eq!(ended(&mut events_rx), vec!["failed"]);
        assert!(finished.is_cancelled());

        // With nobody left to read the events, the next turn is still released.
        let (events_tx, events_rx) = mpsc::channel(8);
        drop(events_rx);
        let finished = CancellationToken::new();
        drop(TurnEnd::new("t".into(), events_tx, None, finished.clone()));
        assert!(finished.is_cancelled());
    }

    #[tokio::test]
    async fn the_clock_stops_once_and_the_terminal_event_carries_the_same_times() {
        let (events_tx, mut events_rx) = mpsc::channel(8);
        let mut end = TurnEnd::new("t".into(), events_tx, None, CancellationToken::new());
        let first = end.stop();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(end.stop(), first);
        end.end(TurnOutcome::Interrupted).await;
        match events_rx.try_recv() {
            Ok(EventMsg::TurnEnded {
                completed_at,
                duration_ms,
                ..
            }) => assert_eq!(
                TurnTimes {
                    completed_at,
                    duration_ms
                },
                first
            ),
            other => panic!("unexpected {other:?}"),
        }
    }
}
