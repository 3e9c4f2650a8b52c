//! Starting turns: the thread admits input (steered into the running turn, or a new active
//! turn), and this file runs what it admitted. The thread never spawns a turn itself, so
//! `thread.rs` does not depend on the turn loop; the turn loop depends on the thread.

use std::sync::Arc;

use super::super::error::CoreError;
use super::super::goal::prompt::{continuation_message, objective_message};
use super::super::input::PreparedInput;
use super::super::thread::{
    Admission, AdmittedTurn, PendingInput, StartedTurn, Thread, TurnGate, TurnKind, TurnOptions,
};
use super::super::tools::handle::TurnHandle;
use super::lifecycle::TurnEnd;
use super::review::run_review_turn;
use super::turn_context::TurnContext;
use super::turn_loop::{run_compaction_turn, run_turn};

impl Thread {
    /// Starts a turn, or, when one is running, steers the input into it and returns its id.
    /// `output_schema` (a JSON Schema for the final message) applies to a new turn only; steered
    /// input joins a turn whose requests are already shaped.
    pub fn start_turn(
        self: &Arc<Self>,
        input: PreparedInput,
        client_id: Option<String>,
        output_schema: Option<serde_json::Value>,
    ) -> Result<StartedTurn, CoreError> {
        let options = TurnOptions {
            output_schema,
            ..TurnOptions::default()
        };
        self.start_turn_with(input, client_id, options)
    }

    /// [`Thread::start_turn`] with every per-turn option; like `output_schema`, the options
    /// shape a new turn only and are dropped when the input steers a running one.
    pub fn start_turn_with(
        self: &Arc<Self>,
        input: PreparedInput,
        client_id: Option<String>,
        options: TurnOptions,
    ) -> Result<StartedTurn, CoreError> {
        Ok(match self.admit_input(input, client_id, options) {
            Admission::Steered { turn_id } => StartedTurn {
                turn_id,
                steered: true,
                gate: None,
            },
            Admission::New(admitted) => launch(self, admitted),
        })
    }

    /// Starts a turn that only compacts the history (`thread/compact/start`). Refused while a
    /// turn runs; when one is ending, the compaction follows it. The compaction turn takes no
    /// input: a `turn/start` meanwhile starts the next turn after it.
    pub fn start_compaction(self: &Arc<Self>) -> Result<StartedTurn, CoreError> {
        let admitted = self.admit_compaction()?;
        Ok(launch(self, admitted))
    }

    /// Starts an automatic turn for the thread's active goal when the thread is idle: the
    /// model gets the objective (once per goal) and the continuation message, neither shown to
    /// the client as an item. `None` when there is no active goal, a turn runs or is queued,
    /// or the thread is shutting down. The caller opens the gate.
    pub(crate) fn start_goal_turn(self: &Arc<Self>) -> Option<StartedTurn> {
        if self.shutdown.is_cancelled() {
            return None;
        }
        let mut state = self.state();
        if state.active.is_some() || !state.goal.is_active() {
            return None;
        }
        let goal = state.goal.goal.clone()?;
        let mut pending = Vec::new();
        if !state.goal.objective_told {
            pending.push(PendingInput::hidden(objective_message(&goal)));
            state.goal.objective_told = true;
        }
        pending.push(PendingInput::hidden(continuation_message(&goal)));
        let history_start = state.history.len();
        let admitted = self.admit_turn_with(state, pending, TurnOptions::default(), |state, id| {
            state.goal.goal_turn = Some((id.clone(), history_start));
        });
        Some(launch(self, admitted))
    }

    /// Starts a review turn (`review/start`): like a compaction, refused while a turn runs.
    pub fn start_review(
        self: &Arc<Self>,
        review: super::super::review::ReviewRequest,
    ) -> Result<StartedTurn, CoreError> {
        let options = TurnOptions {
            review: Some(review),
            ..TurnOptions::default()
        };
        let admitted = self.admit_exclusive(TurnKind::Review, options)?;
        Ok(launch(self, admitted))
    }
}

/// Spawns an admitted turn's task behind a gate: it emits nothing before the caller answered
/// its request, and nothing before the turn it follows has ended.
fn launch(thread: &Arc<Thread>, admitted: AdmittedTurn) -> StartedTurn {
    let AdmittedTurn {
        turn_id,
        cancel,
        pending_input,
        finished,
        options,
        previous_finished,
        kind,
        settings_patch,
    } = admitted;
    let review = options.review;
    let (gate_tx, gate_rx) = tokio::sync::oneshot::channel();
    let context = TurnContext {
        handle: TurnHandle::new(
            turn_id.clone(),
            cancel,
            thread.events_tx.clone(),
            thread.rollout.clone(),
            thread.clone(),
            thread.questions.clone(),
        ),
        thread: thread.clone(),
        pending_input,
        finished,
        provider_turn_state: Default::default(),
        output_schema: options.output_schema,
        rerouted_announced: Arc::default(),
        skills_instructions: None,
        service_tier: options.service_tier,
        settings_patch,
    };
    // The guard that ends the turn exists before its task first runs: however the task ends,
    // even torn down while it waits, the turn ends once and the one queued behind it starts.
    let end = TurnEnd::new(
        turn_id.clone(),
        thread.events_tx.clone(),
        Some(thread.clone()),
        context.finished.clone(),
    );
    thread.tasks.spawn(async move {
        // Either outcome means "go": the caller answered, or gave up the gate.
        let _ = gate_rx.await;
        if let Some(previous) = previous_finished {
            previous.cancelled().await;
        }
        #[cfg(debug_assertions)]
        panic_if_a_test_asks(kind);
        match kind {
            TurnKind::Sampling => run_turn(context, end).await,
            TurnKind::Compaction => run_compaction_turn(context, end).await,
            TurnKind::Review => run_review_turn(context, end, review).await,
        }
    });
    StartedTurn {
        turn_id,
        steered: false,
        gate: Some(TurnGate(gate_tx)),
    }
}

/// A test's stand-in for a turn task that ends abnormally: with `OPENTURN_TEST_PANIC_TURN` set to
/// `sampling` or `compaction`, a turn of that kind panics as its task begins. Compiled into
/// debug builds only (the end-to-end tests run `target/debug/openturn`); a release build has no
/// such path, whatever its environment.
#[cfg(debug_assertions)]
fn panic_if_a_test_asks(kind: TurnKind) {
    let name = match kind {
        TurnKind::Sampling => "sampling",
        TurnKind::Compaction => "compaction",
        TurnKind::Review => "review",
    };
    if std::env::var("OPENTURN_TEST_PANIC_TURN").is_ok_and(|wanted| wanted == name) {
        panic!("OPENTURN_TEST_PANIC_TURN={name}: this turn's task ends abnormally, for a test");
    }
}
