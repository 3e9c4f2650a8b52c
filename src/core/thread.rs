//! A thread: settings, model-visible history, the active turn, and the rollout it appends to.

mod admission;

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::client::ModelClient;
use crate::rollout::{RolloutItem, RolloutWriter};
use crate::wire::{ResponseItem, TokenUsage};

use super::ask::Questions;
use super::error::CoreError;
use super::event::EventMsg;
use super::ids::{ThreadId, TurnId};
use super::input::PreparedInput;
use super::settings::{PersistedSettings, ThreadSettings};

pub(crate) use admission::{ActiveTurn, Admission, AdmittedTurn, PendingInput, TurnKind};
pub use admission::{StartedTurn, TurnGate, TurnOptions};

pub(crate) struct ThreadState {
    pub settings: ThreadSettings,
    pub history: Vec<ResponseItem>,
    pub active: Option<ActiveTurn>,
    pub total_usage: TokenUsage,
    pub name: Option<String>,
    /// Ids of the latest turns that ended, so a late `turn/interrupt` for one answers at once.
    pub ended_turn_ids: std::collections::VecDeque<TurnId>,
    /// Commands the user approved "for this session": (display form, working directory). Only
    /// the same command line in the same directory runs again unasked.
    pub approved_commands: std::collections::HashSet<(String, std::path::PathBuf)>,
    /// Sandbox modes this thread already warned cannot be enforced on this kernel.
    pub sandbox_warnings: std::collections::HashSet<&'static str>,
    /// The settings as the rollout last recorded them; a turn that finds `settings` moved on
    /// records the new snapshot first.
    pub persisted_settings: PersistedSettings,
    /// What the provider last reported a request of this thread used (`total_tokens`), on which
    /// automatic compaction decides. `None` until a response reports usage, and again once a
    /// compaction replaced the history (the count was of the history before it).
    pub reported_context_tokens: Option<i64>,
    /// The thread's goal and what its automatic turns need (`core/goal/`).
    pub goal: super::goal::model::GoalRuntime,
}

/// How many ended turn ids a thread remembers for idempotent interrupts.
const REMEMBERED_ENDED_TURNS: usize = 32;

pub struct Thread {
    pub id: ThreadId,
    pub created_at: i64,
    pub ephemeral: bool,
    pub forked_from_id: Option<String>,
    pub(crate) rollout: Option<RolloutWriter>,
    pub(crate) events_tx: mpsc::Sender<EventMsg>,
    /// The thread's open questions to the client: every question, of a turn or between turns,
    /// is asked through them (`core/ask.rs`).
    pub(crate) questions: Arc<Questions>,
    pub(crate) client: ModelClient,
    state: Mutex<ThreadState>,
    /// Owns every turn task of this thread; `ThreadManager::shutdown` waits on it.
    pub(crate) tasks: TaskTracker,
    /// Cancelled at shutdown; each turn's token is a child.
    pub(crate) shutdown: CancellationToken,
    /// The thread's MCP servers, once started (see [`Thread::start_mcp_servers`]).
    pub(crate) mcp: std::sync::OnceLock<Arc<crate::mcp::McpServers>>,
    /// Whether any request got past this process, to keep or drop the rollout (`unsent.rs`).
    pub(crate) provider_contact: super::unsent::ProviderContact,
    /// The commands of the model still running (`exec_command` sessions, background
    /// terminals); killed when the thread shuts down or unloads.
    pub(crate) terminals: Arc<super::tools::unified_exec::Terminals>,
    /// The sub-agents' control (`core/agents/`), set by the manager that made the thread.
    /// Typed as `Any` because the control's module imports this one (imports go one way);
    /// `agents::control_of` gives it its type back.
    pub(crate) agents: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
    /// Who spawned this thread, when a sub-agent tool did.
    pub(crate) origin: std::sync::OnceLock<super::agents::status::AgentOrigin>,
    /// How this thread's last turn ended (and how many ended): what a parent waiting on this
    /// thread as a sub-agent watches.
    pub(crate) turn_ends: tokio::sync::watch::Sender<super::agents::status::TurnEndNote>,
    /// Messages for the model that arrived while a turn ran (a sub-agent finished); the next
    /// turn admitted takes them before its input.
    pub(crate) mailbox: Mutex<Vec<ResponseItem>>,
}

impl Thread {
    #[allow(
        clippy::too_many_arguments,
        reason = "a thread's identity, settings, history, rollout and channels are all fixed at \
                  creation and called from one place (ThreadManager::insert_thread)"
    )]
    pub(crate) fn new(
        id: ThreadId,
        created_at: i64,
        ephemeral: bool,
        forked_from_id: Option<String>,
        settings: ThreadSettings,
        history: Vec<ResponseItem>,
        rollout: Option<RolloutWriter>,
        events_tx: mpsc::Sender<EventMsg>,
        client: ModelClient,
        shutdown: CancellationToken,
    ) -> Thread {
        Thread {
            id,
            created_at,
            ephemeral,
            forked_from_id,
            rollout,
            questions: Questions::new(events_tx.clone()),
            events_tx,
            client,
            state: Mutex::new(ThreadState {
                persisted_settings: settings.persisted(),
                settings,
                history,
                active: None,
                total_usage: TokenUsage::default(),
                name: None,
                ended_turn_ids: std::collections::VecDeque::new(),
                approved_commands: std::collections::HashSet::new(),
                sandbox_warnings: std::collections::HashSet::new(),
                reported_context_tokens: None,
                goal: Default::default(),
            }),
            tasks: TaskTracker::new(),
            shutdown,
            mcp: std::sync::OnceLock::new(),
            provider_contact: Default::default(),
            terminals: Arc::default(),
            agents: std::sync::OnceLock::new(),
            origin: std::sync::OnceLock::new(),
            turn_ends: tokio::sync::watch::Sender::new(Default::default()),
            mailbox: Mutex::default(),
        }
    }

    /// Locks the state. Never held across an await.
    pub(crate) fn state(&self) -> MutexGuard<'_, ThreadState> {
        match self.state.lock() {
            Ok(guard) => guard,
            // A panic while holding the lock leaves plain data behind; keep serving it.
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub fn settings(&self) -> ThreadSettings {
        self.state().settings.clone()
    }

    pub fn update_settings(&self, update: impl FnOnce(&mut ThreadSettings)) {
        update(&mut self.state().settings);
    }

    /// The settings snapshot to record when they changed since the rollout last recorded them
    /// (and marks it recorded).
    pub(crate) fn take_settings_change(&self) -> Option<PersistedSettings> {
        let mut state = self.state();
        let current = state.settings.persisted();
        if current == state.persisted_settings {
            return None;
        }
        state.persisted_settings = current.clone();
        Some(current)
    }

    pub fn history(&self) -> Vec<ResponseItem> {
        self.state().history.clone()
    }

    pub fn active_turn_id(&self) -> Option<TurnId> {
        self.state().active.as_ref().map(|a| a.turn_id.clone())
    }

    pub fn rollout_path(&self) -> Option<std::path::PathBuf> {
        self.rollout.as_ref().map(|w| w.path().to_path_buf())
    }

    pub fn name(&self) -> Option<String> {
        self.state().name.clone()
    }

    /// Sets the thread's title and persists it.
    pub async fn set_name(&self, name: String) -> Result<(), CoreError> {
        self.state().name = Some(name.clone());
        if let Some(rollout) = &self.rollout {
            rollout.append(RolloutItem::ThreadName { name }).await?;
        }
        Ok(())
    }

    /// Admits input: steers it into the running turn, or makes a new turn the active one (the
    /// caller runs it, see `turn::start`). The options shape a new turn only and are dropped
    /// when the input steers a running one.
    pub(crate) fn admit_input(
        self: &Arc<Self>,
        input: PreparedInput,
        client_id: Option<String>,
        options: TurnOptions,
    ) -> Admission {
        let state = self.state();
        let previous_finished = match &state.active {
            Some(active) if !active.closing => {
                push_pending(active, input, client_id);
                return Admission::Steered {
                    turn_id: active.turn_id.clone(),
                };
            }
            // The running turn is ending: this input starts the next turn, after it.
            Some(active) => Some(active.finished.clone()),
            None => None,
        };
        let mut pending = self.take_mailbox();
        pending.push(PendingInput::new(input, client_id));
        Admission::New(self.admit_turn(
            state,
            pending,
            options,
            previous_finished,
            TurnKind::Sampling,
        ))
    }

    /// Admits a turn that only compacts the history (`thread/compact/start`). Refused while a
    /// turn runs; when one is ending, the compaction follows it. The compaction turn takes no
    /// input: a `turn/start` meanwhile starts the next turn after it.
    pub(crate) fn admit_compaction(self: &Arc<Self>) -> Result<AdmittedTurn, CoreError> {
        self.admit_exclusive(TurnKind::Compaction, TurnOptions::default())
    }

    /// Admits a turn that takes no input (a compaction, a review), as [`Thread::admit_compaction`]
    /// says: refused while a turn runs, after the one that is ending.
    pub(crate) fn admit_exclusive(
        self: &Arc<Self>,
        kind: TurnKind,
        options: TurnOptions,
    ) -> Result<AdmittedTurn, CoreError> {
        let state = self.state();
        let previous_finished = match &state.active {
            Some(active) if !active.closing => {
                return Err(CoreError::TurnRunning(active.turn_id.to_string()))
            }
            Some(active) => Some(active.finished.clone()),
            None => None,
        };
        Ok(self.admit_turn(state, Vec::new(), options, previous_finished, kind))
    }

    /// Makes a new turn the active one, under the lock the caller holds, so nothing slips in
    /// between the check and this. Nothing runs yet: the turn module spawns it.
    fn admit_turn(
        self: &Arc<Self>,
        state: MutexGuard<'_, ThreadState>,
        pending: Vec<PendingInput>,
        options: TurnOptions,
        previous_finished: Option<CancellationToken>,
        kind: TurnKind,
    ) -> AdmittedTurn {
        self.admit_turn_as(
            state,
            TurnId::new(),
            pending,
            options,
            previous_finished,
            kind,
        )
    }

    fn admit_turn_as(
        self: &Arc<Self>,
        mut state: MutexGuard<'_, ThreadState>,
        turn_id: TurnId,
        pending: Vec<PendingInput>,
        options: TurnOptions,
        previous_finished: Option<CancellationToken>,
        kind: TurnKind,
    ) -> AdmittedTurn {
        let cancel = self.shutdown.child_token();
        let finished = CancellationToken::new();
        let pending_input = Arc::new(Mutex::new(pending));
        let settings_patch = Arc::default();
        state.active = Some(ActiveTurn {
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
            pending_input: pending_input.clone(),
            // A compaction or review turn takes no steered input from the start.
            closing: kind != TurnKind::Sampling,
            finished: finished.clone(),
            settings_patch: Arc::clone(&settings_patch),
        });
        AdmittedTurn {
            turn_id,
            cancel,
            pending_input,
            finished,
            options,
            previous_finished,
            kind,
            settings_patch,
        }
    }

    /// Admits a sampling turn that nothing is queued behind, and lets the caller note the new
    /// turn's id in the state under the same lock (so its end cannot be accounted before).
    pub(crate) fn admit_turn_with(
        self: &Arc<Self>,
        state: MutexGuard<'_, ThreadState>,
        pending: Vec<PendingInput>,
        options: TurnOptions,
        note: impl FnOnce(&mut ThreadState, &TurnId),
    ) -> AdmittedTurn {
        let mut state = state;
        let turn_id = TurnId::new();
        note(&mut state, &turn_id);
        self.admit_turn_as(state, turn_id, pending, options, None, TurnKind::Sampling)
    }

    /// Queues input for the running turn; it is delivered at the next sampling boundary.
    pub fn steer(
        &self,
        expected_turn_id: &TurnId,
        input: PreparedInput,
        client_id: Option<String>,
    ) -> Result<TurnId, CoreError> {
        let state = self.state();
        let active = state
            .active
            .as_ref()
            .filter(|active| !active.closing)
            .ok_or(CoreError::NoActiveTurnToSteer)?;
        if active.turn_id != *expected_turn_id {
            return Err(CoreError::SteerTurnMismatch {
                expected: expected_turn_id.to_string(),
                active: active.turn_id.to_string(),
            });
        }
        push_pending(active, input, client_id);
        Ok(active.turn_id.clone())
    }

    /// Cancels the running turn; it ends `interrupted` on its own task. Idempotent: interrupting
    /// a turn already cancelled, or one that already ended, succeeds at once.
    pub fn interrupt(&self, turn_id: &TurnId) -> Result<(), CoreError> {
        let state = self.state();
        match &state.active {
            Some(active) if active.turn_id == *turn_id => {
                active.cancel.cancel();
                Ok(())
            }
            _ if state.ended_turn_ids.iter().any(|ended| ended == turn_id) => Ok(()),
            Some(active) => Err(CoreError::InterruptTurnMismatch {
                expected: turn_id.to_string(),
                active: active.turn_id.to_string(),
            }),
            None => Err(CoreError::NoActiveTurnToInterrupt),
        }
    }

    /// Closes the turn to new input unless some is pending; true when it closed. Checking and
    /// closing under one lock is what keeps a steer from slipping in between.
    pub(crate) fn close_turn_unless_pending(&self, turn_id: &TurnId) -> bool {
        let mut state = self.state();
        let Some(active) = state.active.as_mut().filter(|a| a.turn_id == *turn_id) else {
            return true;
        };
        let has_pending = active
            .pending_input
            .lock()
            .map(|pending| !pending.is_empty())
            .unwrap_or(false);
        if !has_pending {
            active.closing = true;
        }
        !has_pending
    }

    /// Closes the turn to new input; what is still pending will not be delivered.
    pub(crate) fn close_turn(&self, turn_id: &TurnId) {
        if let Some(active) = self
            .state()
            .active
            .as_mut()
            .filter(|a| a.turn_id == *turn_id)
        {
            active.closing = true;
        }
    }

    /// Called once by the turn's end: frees the active slot and remembers the id.
    pub(crate) fn turn_ended(&self, turn_id: &TurnId, outcome: Option<&super::event::TurnOutcome>) {
        if let Some(outcome) = outcome {
            self.turn_ends
                .send_modify(|note| note.record(turn_id, outcome));
        }
        let mut state = self.state();
        if state.active.as_ref().map(|a| &a.turn_id) == Some(turn_id) {
            state.active = None;
        }
        if state.ended_turn_ids.len() >= REMEMBERED_ENDED_TURNS {
            state.ended_turn_ids.pop_front();
        }
        state.ended_turn_ids.push_back(turn_id.clone());
    }

    /// Fsyncs and closes the rollout, releasing its lock (the thread is being unloaded); or
    /// deletes it when no request of the thread ever left the process.
    pub async fn close_rollout(&self) {
        if self
            .provider_contact
            .discard_rollout_if_never_sent(self.rollout.as_ref(), &self.id)
            .await
        {
            return;
        }
        if let Some(rollout) = &self.rollout {
            if let Err(error) = rollout.close().await {
                tracing::debug!(%error, "rollout close");
            }
        }
    }

    /// Interrupts whatever runs and waits for the turn tasks to finish and rollouts to flush.
    pub async fn shutdown(&self) {
        if let Some(active) = &self.state().active {
            active.cancel.cancel();
        }
        self.tasks.close();
        self.tasks.wait().await;
        // After the turns: a turn that was still starting a command has added it by now.
        self.terminals.shutdown().await;
        if let Some(mcp) = self.mcp.get() {
            mcp.shutdown().await;
        }
        if self
            .provider_contact
            .discard_rollout_if_never_sent(self.rollout.as_ref(), &self.id)
            .await
        {
            return;
        }
        if let Some(rollout) = &self.rollout {
            if let Err(error) = rollout.flush().await {
                tracing::warn!(%error, "rollout flush at shutdown failed");
            }
        }
    }
}

fn push_pending(active: &ActiveTurn, input: PreparedInput, client_id: Option<String>) {
    if let Ok(mut pending) = active.pending_input.lock() {
        pending.push(PendingInput::new(input, client_id));
    }
}

#[cfg(test)]
impl Thread {
    /// A fresh thread for unit tests: test settings, an empty history, its events to `events_tx`
    /// and its lines to `rollout` (none: an ephemeral thread).
    pub(crate) fn for_tests(
        rollout: Option<RolloutWriter>,
        events_tx: mpsc::Sender<EventMsg>,
    ) -> Thread {
        Thread::new(
            ThreadId::new(),
            0,
            rollout.is_none(),
            None,
            ThreadSettings::for_tests(),
            Vec::new(),
            rollout,
            events_tx,
            ModelClient::new().unwrap(),
            CancellationToken::new(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::items::UserInput;

    fn thread() -> Arc<Thread> {
        let (events_tx, _events_rx) = mpsc::channel(8);
        Arc::new(Thread::for_tests(None, events_tx))
    }

    fn text(text: &str) -> PreparedInput {
        PreparedInput::without_files(vec![UserInput::Text { text: text.into() }])
    }

    #[tokio::test]
    async fn a_closing_turn_takes_no_steer_and_new_input_starts_the_next_turn() {
        let thread = thread();
        // The gate stays closed: the turn task never reaches the provider.
        let first = thread.start_turn(text("one"), None, None).unwrap();
        let steered = thread.start_turn(text("two"), None, None).unwrap();
        assert!(steered.steered);
        assert_eq!(steered.turn_id, first.turn_id);
        // Pending input keeps the turn open...
        assert!(!thread.close_turn_unless_pending(&first.turn_id));
        if let Some(active) = &thread.state().active {
            if let Ok(mut pending) = active.pending_input.lock() {
                pending.clear();
            }
        }
        // ...and once it is delivered the turn may close, after which nothing is accepted.
        assert!(thread.close_turn_unless_pending(&first.turn_id));
        assert!(matches!(
            thread.steer(&first.turn_id, text("late"), None),
            Err(CoreError::NoActiveTurnToSteer)
        ));
        let next = thread.start_turn(text("three"), None, None).unwrap();
        assert!(!next.steered);
        assert_ne!(next.turn_id, first.turn_id);
        assert_eq!(thread.active_turn_id(), Some(next.turn_id.clone()));
        // The first turn ending does not free the slot the second one holds.
        thread.turn_ended(&first.turn_id, None);
        assert_eq!(thread.active_turn_id(), Some(next.turn_id));
        thread.shutdown.cancel();
    }
}
