//! The one place a protocol `Turn` is built. The live projection (`turn/started`,
//! `turn/completed`, the `turn/start` response) and the replay of a rollout (`thread/read`,
//! `thread/resume`, `thread/fork`, `thread/items/list`) feed it the same facts — a turn started,
//! its items, its end as core's [`TurnEndRecord`] — so a turn reads the same live and replayed:
//! the same status, error, times and duration. Only the items view differs by what the caller
//! has: `turn/completed` carries a summary (the last response's messages), a rebuilt turn every
//! stored item.

use crate::core::record::{TurnEndRecord, TurnEndStatus};
use crate::protocol::item::ThreadItem;
use crate::protocol::turn::{Turn, TurnStatus};

use super::convert;

/// How much of a turn's items a `Turn` carries (its `itemsView`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemsView {
    /// No items: a turn just announced, or one that ended without a summary.
    NotLoaded,
    /// The last response's messages, as `turn/completed` reports a completed turn.
    Summary,
    /// Every stored item, as a turn rebuilt from the rollout has.
    Full,
}

impl ItemsView {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ItemsView::NotLoaded => "notLoaded",
            ItemsView::Summary => "summary",
            ItemsView::Full => "full",
        }
    }
}

/// A turn being built: start it, end it (or not), then give it its items.
#[derive(Debug, Clone)]
pub(crate) struct TurnBuilder {
    turn: Turn,
}

impl TurnBuilder {
    /// A turn that started (at Unix seconds `started_at`, when known) and has not ended.
    pub(crate) fn started(turn_id: &str, started_at: Option<i64>) -> TurnBuilder {
        TurnBuilder {
            turn: Turn {
                id: turn_id.to_string(),
                root_turn_id: Some(turn_id.to_string()),
                items: Vec::new(),
                items_view: ItemsView::NotLoaded.as_str().to_string(),
                status: TurnStatus::InProgress,
                error: None,
                started_at,
                completed_at: None,
                duration_ms: None,
            },
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.turn.id
    }

    /// A turn with no end that is not running any more was cut short (a crash, a kill): it
    /// reads `interrupted` until an end says otherwise.
    pub(crate) fn cut_short(&mut self) {
        self.turn.status = TurnStatus::Interrupted;
    }

    /// The turn ended as `end` records.
    pub(crate) fn ended(&mut self, end: &TurnEndRecord) {
        self.turn.status = match end.status {
            TurnEndStatus::Completed => TurnStatus::Completed,
            TurnEndStatus::Interrupted => TurnStatus::Interrupted,
            TurnEndStatus::Failed => TurnStatus::Failed,
        };
        self.turn.error = end.error.as_ref().map(convert::turn_error);
        self.turn.completed_at = Some(end.completed_at);
        // The measured duration is the one figure; only end lines written before it was
        // recorded fall back to the whole seconds between the two timestamps.
        self.turn.duration_ms = end.duration_ms.or_else(|| {
            self.turn
                .started_at
                .map(|started| (end.completed_at - started).max(0).saturating_mul(1000))
        });
    }

    /// The turn, carrying `items` as `view`.
    pub(crate) fn build(mut self, view: ItemsView, items: Vec<ThreadItem>) -> Turn {
        self.turn.items_view = view.as_str().to_string();
        self.turn.items = items;
        self.turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{TurnError, TurnErrorKind, TurnOutcome};

    /// Invariant: a turn's end reads the same whether it comes from the live outcome or from
    /// the end line written for it (here, the line parsed back from its bytes).
    #[test]
    fn a_live_end_and_its_replayed_end_line_build_the_same_turn() {
        let error = TurnError {
            message: "quota".into(),
            kind: TurnErrorKind::UsageLimitExceeded,
            details: Some("try later".into()),
        };
        for outcome in [
            TurnOutcome::Completed {
                final_items: Vec::new(),
            },
            TurnOutcome::Interrupted,
            TurnOutcome::Failed(error.clone()),
        ] {
            let live_end = TurnEndRecord::new("t", &outcome, 20, 1500);
            let mut live = TurnBuilder::started("t", Some(19));
            live.ended(&live_end);

            let bytes = serde_json::to_vec(&live_end.to_rollout()).unwrap();
            let line: crate::rollout::RolloutItem = serde_json::from_slice(&bytes).unwrap();
            let Some(crate::core::record::TurnRecord::Ended(stored_end)) =
                crate::core::record::TurnRecord::read(&line)
            else {
                panic!("not an end line");
            };
            let mut replayed = TurnBuilder::started("t", Some(19));
            replayed.ended(&stored_end);
            assert_eq!(
                live.build(ItemsView::Full, Vec::new()),
                replayed.build(ItemsView::Full, Vec::new())
            );
        }
    }

    #[test]
    fn an_end_line_without_a_duration_falls_back_to_whole_seconds() {
        let mut turn = TurnBuilder::started("t", Some(10));
        turn.ended(&TurnEndRecord::cut_short("t", 12));
        let turn = turn.build(ItemsView::Full, Vec::new());
        assert_eq!(turn.duration_ms, Some(2000));
        assert_eq!(turn.status, TurnStatus::Interrupted);
    }
}
