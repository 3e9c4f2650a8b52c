//! What a tool sees of the turn that called it: a small handle, never the turn itself.
//!
//! A tool emits events, announces its items' start and completion (stamped once here and
//! recorded with the item), asks the client (every question through [`TurnHandle::ask`], the
//! thread's one `ask`) and watches for the turn's end through [`TurnHandle`]; it reads the thread's settings and the approvals already granted
//! through [`ToolEnvironment`]. The turn builds the handle and depends on the tools through
//! `tools::run`; the tools depend on this file only, so neither the turn loop nor the thread is
//! imported by any tool.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::McpServers;
use crate::rollout::{RolloutItem, RolloutWriter};
use crate::wire::{ContentItem, FunctionCallOutputBody, ResponseItem};

use super::super::approval::{ClientReply, ClientRequestKind};
use super::super::ask::Questions;
use super::super::clock;
use super::super::event::EventMsg;
use super::super::goal::model::{Goal, GoalError, GoalRuntime};
use super::super::ids::{ItemId, TurnId};
use super::super::items::TurnItem;
use super::super::record::{self, ItemTimes};
use super::super::settings::ThreadSettings;
use super::apply_patch::turn_diff::TurnSnapshots;
use super::output::ToolOutput;

/// A command line in a directory: what an approval "for this session" covers.
pub(crate) type ApprovalKey = (String, PathBuf);

/// The thread-level things a tool reads or records: the settings in force when it runs, the
/// approvals granted for the session and the MCP servers. The thread implements it; a tool
/// never holds the thread.
pub(crate) trait ToolEnvironment: Send + Sync {
    /// The thread's settings now (cwd, sandbox, approval policy, model).
    fn settings(&self) -> ThreadSettings;
    /// Whether the user already approved this command line here for the session.
    fn approved_for_session(&self, key: &ApprovalKey) -> bool;
    /// Remembers an "accept for session" answer.
    fn approve_for_session(&self, key: ApprovalKey);
    /// True the first time a sandbox's "cannot be enforced" warning is due on this thread.
    fn first_sandbox_warning(&self, sandbox: &'static str) -> bool;
    /// The thread's MCP servers, once started.
    fn mcp_servers(&self) -> Option<Arc<McpServers>>;
    /// The thread's running commands (`exec_command` sessions), which outlive their turn. Typed
    /// as `Any` because the sessions' module imports this one (imports go one way);
    /// `unified_exec::terminals_of` gives them their type back.
    fn terminals(&self) -> Arc<dyn std::any::Any + Send + Sync>;
    /// The thread's id, as the goal tools report it.
    fn thread_id(&self) -> String;
    /// The thread as a parent of sub-agents (`tools/agents/`), typed as `Any` because the
    /// thread's module imports this one (imports go one way): `tools/agents` gives it its type
    /// back and finds the control through it. `None` where the thread was made without a
    /// manager.
    fn agents(&self) -> Option<Arc<dyn std::any::Any + Send + Sync>>;
    /// Reads or changes the thread's goal under the thread's lock: `change` gets the goal's
    /// runtime, the time now (Unix seconds) and the thread's token total.
    fn with_goal(
        &self,
        change: &mut dyn FnMut(&mut GoalRuntime, i64, i64) -> Result<Goal, GoalError>,
    ) -> Result<Goal, GoalError>;
}

/// The turn as a tool sees it. Cloned into each tool task of the turn.
#[derive(Clone)]
pub(crate) struct TurnHandle {
    pub turn_id: TurnId,
    /// Cancelled when the turn is interrupted (or a tool's answer ends it).
    pub cancel: CancellationToken,
    /// Each file this turn's patches touched, as it was before the turn's first change to it
    /// (`None`: it did not exist): the base of `turn/diff/updated`.
    pub file_snapshots: Arc<Mutex<TurnSnapshots>>,
    pub env: Arc<dyn ToolEnvironment>,
    /// The thread's open questions: every question of the turn is asked through them.
    questions: Arc<Questions>,
    events: mpsc::Sender<EventMsg>,
    rollout: Option<RolloutWriter>,
    /// When each item of the turn that started and has not completed yet started (Unix ms), by
    /// item id: the start an item's completion carries. Shared by the turn and its tools; a
    /// std mutex, held only to insert or remove one entry (never across an await), and one
    /// turn's open items keep it small.
    item_starts: Arc<Mutex<HashMap<ItemId, i64>>>,
    /// Content parts a tool answers with instead of its text (an image for `view_image`), by
    /// call id; taken when the call's output is recorded ([`TurnHandle::output_item`]).
    output_content: Arc<Mutex<HashMap<ItemId, Vec<ContentItem>>>>,
}

impl TurnHandle {
    pub(crate) fn new(
        turn_id: TurnId,
        cancel: CancellationToken,
        events: mpsc::Sender<EventMsg>,
        rollout: Option<RolloutWriter>,
        env: Arc<dyn ToolEnvironment>,
        questions: Arc<Questions>,
    ) -> Self {
        TurnHandle {
            turn_id,
            cancel,
            file_snapshots: Arc::default(),
            env,
            questions,
            events,
            rollout,
            item_starts: Arc::default(),
            output_content: Arc::default(),
        }
    }

    /// Announces that `item` started, stamped once with core's clock: the notification and,
    /// at completion, the item's rollout record carry this start. An item announced twice
    /// keeps its first start.
    pub(crate) async fn item_started(&self, item: TurnItem) {
        let now = clock::now_unix_millis();
        let started_at_ms = match self.item_starts.lock() {
            Ok(mut starts) => *starts.entry(item.id().clone()).or_insert(now),
            Err(_) => now,
        };
        self.emit(EventMsg::ItemStarted {
            turn_id: self.turn_id.clone(),
            item,
            started_at_ms,
        })
        .await;
    }

    /// Whether `id` was announced as started and has not completed yet: a tool whose item the
    /// turn already started while its call streamed (an `apply_patch` preview) must not start
    /// it again.
    pub(crate) fn item_is_open(&self, id: &ItemId) -> bool {
        self.item_starts
            .lock()
            .is_ok_and(|starts| starts.contains_key(id))
    }

    /// Records the completed `item` in the rollout (so a resumed thread shows it), then
    /// announces it. Both carry the same start and completion times, so the item reads the
    /// same live and replayed. An item never announced as started starts when it completes.
    pub(crate) async fn item_completed(&self, item: TurnItem) {
        let completed_at_ms = clock::now_unix_millis();
        let started = match self.item_starts.lock() {
            Ok(mut starts) => starts.remove(item.id()),
            Err(_) => None,
        };
        // A wall clock stepped back between the two ends must not make an item end before it
        // started.
        let times = ItemTimes {
            started_at_ms: started.unwrap_or(completed_at_ms).min(completed_at_ms),
            completed_at_ms,
        };
        if let Some(line) = record::turn_item(&self.turn_id, &item, times) {
            self.persist(line).await;
        }
        self.emit(EventMsg::ItemCompleted {
            turn_id: self.turn_id.clone(),
            item,
            started_at_ms: times.started_at_ms,
            completed_at_ms: times.completed_at_ms,
        })
        .await;
    }

    /// Asks the client `kind` for this turn and waits for the answer: the one way a tool asks
    /// (`core/ask.rs` counts the open questions and keeps the thread's waiting flags true).
    /// `Cancelled` when the turn ends first or the request is lost.
    pub(crate) async fn ask(&self, kind: ClientRequestKind) -> ClientReply {
        self.questions
            .ask(Some(self.turn_id.clone()), kind, &self.cancel)
            .await
    }

    /// [`TurnHandle::ask`], announcing `item` as started once the waiting flag is up and
    /// before the request goes out (the order the reference shows a command's approval in).
    pub(crate) async fn ask_about(&self, item: TurnItem, kind: ClientRequestKind) -> ClientReply {
        self.questions
            .ask_after(
                Some(self.turn_id.clone()),
                kind,
                &self.cancel,
                self.item_started(item),
            )
            .await
    }

    /// Makes the function output of `call_id` these content parts instead of its text: the way
    /// a tool shows the model an image.
    pub(crate) fn answer_with_content(&self, call_id: &ItemId, content: Vec<ContentItem>) {
        if let Ok(mut answers) = self.output_content.lock() {
            answers.insert(call_id.clone(), content);
        }
    }

    /// The history item of a call's output: its text, or the content parts the tool gave
    /// through [`TurnHandle::answer_with_content`].
    pub(crate) fn output_item(&self, output: ToolOutput) -> ResponseItem {
        let content = match self.output_content.lock() {
            Ok(mut answers) if !output.custom => answers.remove(&output.call_id),
            _ => None,
        };
        match content {
            Some(content) => ResponseItem::FunctionCallOutput {
                call_id: output.call_id.into_string(),
                output: FunctionCallOutputBody::Content(content),
            },
            None => output.into_item(),
        }
    }

    /// Sends an event to the server; waits when the client is slow (bounded channel).
    pub(crate) async fn emit(&self, event: EventMsg) {
        if self.events.send(event).await.is_err() {
            tracing::debug!(turn_id = %self.turn_id, "event receiver gone");
        }
    }

    /// Appends to the rollout, best effort: a failure becomes a warning, never a rollback.
    pub(crate) async fn persist(&self, item: RolloutItem) {
        let Some(rollout) = &self.rollout else {
            return;
        };
        if let Err(error) = rollout.append(item).await {
            tracing::warn!(%error, "rollout append failed");
            self.emit(EventMsg::Warning {
                message: format!("could not save to the rollout: {error}"),
            })
            .await;
        }
    }
}
