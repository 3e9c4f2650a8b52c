//! A turn's place in its thread: the active turn the thread holds ([`ActiveTurn`]) and the input
//! queued for it ([`PendingInput`]), the kind and options a turn is admitted with, and what
//! admitting hands back ([`Admission`], [`AdmittedTurn`], [`StartedTurn`] and its [`TurnGate`]).
//! Plain data: the thread (`super`) admits, steers and closes turns with them.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::core::ids::TurnId;
use crate::core::input::PreparedInput;
use crate::core::items::UserInput;
use crate::wire::ResponseItem;

/// The running turn of a thread.
pub(crate) struct ActiveTurn {
    pub turn_id: TurnId,
    pub cancel: CancellationToken,
    /// Input steered into the running turn, delivered at the next sampling boundary.
    pub pending_input: Arc<Mutex<Vec<PendingInput>>>,
    /// Set (under the state lock) once the turn has decided to end: from then on it takes no
    /// more input, so nothing steered can be accepted and then silently dropped.
    pub closing: bool,
    /// Cancelled after the turn's terminal event was emitted; a turn started meanwhile waits on it
    /// so its `turn/started` follows this turn's `turn/completed`.
    pub finished: CancellationToken,
    /// `turn/settings/update`: what this turn's next requests use over the thread's settings.
    pub settings_patch: Arc<Mutex<crate::core::settings::TurnSettingsPatch>>,
}

#[derive(Debug, Clone)]
pub(crate) struct PendingInput {
    pub input: Vec<UserInput>,
    /// The messages the model gets for `input` (the user's, then one per skill), prepared
    /// before the input was accepted.
    pub messages: Vec<ResponseItem>,
    pub client_id: Option<String>,
    /// Only the model sees it (a goal's continuation): no user-message item is announced.
    pub hidden: bool,
}

/// What `start_turn` did.
#[derive(Debug)]
pub struct StartedTurn {
    pub turn_id: TurnId,
    /// True when a turn was already running and the input was steered into it.
    pub steered: bool,
    /// Holds a new turn back until the caller has answered its request; open it (or drop it)
    /// to let the turn emit its first event. `None` when the input was steered.
    pub gate: Option<TurnGate>,
}

/// See [`StartedTurn::gate`].
#[derive(Debug)]
pub struct TurnGate(pub(crate) tokio::sync::oneshot::Sender<()>);

impl TurnGate {
    pub fn open(self) {
        let _ = self.0.send(());
    }
}

/// What a new turn does: sample the model for the user's input, or only compact the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnKind {
    Sampling,
    Compaction,
    /// A code review (`review/start`): the request rides in [`TurnOptions::review`].
    Review,
}

/// What the thread did with input (see [`Thread::admit_input`](super::Thread::admit_input)).
pub(crate) enum Admission {
    /// A turn was running: the input joins it at its next sampling boundary.
    Steered { turn_id: TurnId },
    /// A new turn is now the thread's active one; the caller runs it.
    New(AdmittedTurn),
}

/// A turn the thread made active but does not run: the turn module builds the turn from it
/// and spawns it on the thread's task tracker.
pub(crate) struct AdmittedTurn {
    pub turn_id: TurnId,
    /// A child of the thread's shutdown token; `interrupt` cancels it.
    pub cancel: CancellationToken,
    pub pending_input: Arc<Mutex<Vec<PendingInput>>>,
    /// Cancelled once the turn's terminal event is out.
    pub finished: CancellationToken,
    pub options: TurnOptions,
    /// The ending turn this one waits for, when input arrived while it was closing.
    pub previous_finished: Option<CancellationToken>,
    pub kind: TurnKind,
    pub settings_patch: Arc<Mutex<crate::core::settings::TurnSettingsPatch>>,
}

/// What one `turn/start` asks of its own turn only.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    /// A JSON Schema the final message must follow.
    pub output_schema: Option<serde_json::Value>,
    /// The service tier of this turn's requests, over the thread's.
    pub service_tier: Option<String>,
    /// What a review turn reviews (`review/start`); `None` for any other turn.
    pub review: Option<crate::core::review::ReviewRequest>,
}

impl PendingInput {
    /// Input only the model sees: no user-message item is announced or stored for it.
    pub(crate) fn hidden(message: ResponseItem) -> PendingInput {
        PendingInput {
            input: Vec::new(),
            messages: vec![message],
            client_id: None,
            hidden: true,
        }
    }

    /// Whether the client sees this input as a user message.
    pub(crate) fn is_hidden(&self) -> bool {
        self.hidden
    }

    pub(super) fn new(prepared: PreparedInput, client_id: Option<String>) -> PendingInput {
        PendingInput {
            input: prepared.input,
            messages: prepared.messages,
            client_id,
            hidden: false,
        }
    }
}
