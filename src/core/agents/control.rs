//! The control of every sub-agent of one daemon: spawning, input, closing and reloading, and the
//! status each child's parent sees (updated by a watcher task per loaded child, which also tells
//! the parent when the child finished). A loaded child starts its own MCP servers, as any
//! loaded thread does; they end when it is closed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::rollout::read_rollout;
use crate::wire::ResponseItem;

use super::super::ids::{ThreadId, TurnId};
use super::super::input::PreparedInput;
use super::super::settings::ThreadSettings;
use super::super::thread::Thread;
use super::notify::{notification, origin_in};
use super::status::{AgentOrigin, AgentStatus, TurnEndNote};
use super::types::{AgentError, AgentHost, AgentThreads, MAX_DEPTH, MAX_RUNNING_AGENTS, NAMESPACE};

/// Nicknames children answer to; one not in use by a sibling is picked.
const NICKNAMES: &[&str] = &[
    "Ada", "Boole", "Curie", "Dirac", "Euler", "Fermi", "Gauss", "Hopper", "Iris", "Jansky",
    "Kepler", "Lovelace", "Meitner", "Noether", "Ohm", "Pascal",
];

/// One child, loaded or closed.
struct Child {
    parent: ThreadId,
    nickname: String,
    status: watch::Sender<AgentStatus>,
    /// Closed by `close_agent` (and not resumed since): the tools no longer find it.
    closed: bool,
    /// The parent turn that gave the child its current turn.
    root_turn: Option<TurnId>,
}

/// What `spawn_agent` asks for.
pub struct SpawnRequest {
    pub prompt: String,
    pub fork_context: bool,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    /// The parent's turn that spawns.
    pub root_turn: TurnId,
}

/// The threads and the server the control works through once bound.
type Parts = (Arc<dyn AgentThreads>, Arc<dyn AgentHost>);

/// See the module docs.
#[derive(Default)]
pub struct AgentControl {
    threads: OnceLock<Weak<dyn AgentThreads>>,
    host: OnceLock<Arc<dyn AgentHost>>,
    children: Mutex<HashMap<ThreadId, Child>>,
}

impl AgentControl {
    /// Connects the control to its manager and the server that projects children; until then
    /// the tools answer that sub-agents are unavailable.
    pub fn bind(&self, threads: Weak<dyn AgentThreads>, host: Arc<dyn AgentHost>) {
        let _ = self.threads.set(threads);
        let _ = self.host.set(host);
    }

    fn parts(&self) -> Result<Parts, AgentError> {
        let threads = self.threads.get().and_then(Weak::upgrade);
        match (threads, self.host.get()) {
            (Some(threads), Some(host)) => Ok((threads, host.clone())),
            _ => Err(AgentError::Unavailable),
        }
    }

    /// A loaded thread by id (the caller of a tool, as a parent).
    pub(crate) fn thread(&self, id: &ThreadId) -> Option<Arc<Thread>> {
        let (manager, _) = self.parts().ok()?;
        manager.loaded(id).ok()
    }

    fn children(&self) -> MutexGuard<'_, HashMap<ThreadId, Child>> {
        self.children
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many children run a turn now.
    fn running(&self) -> usize {
        self.children()
            .values()
            .filter(|child| !child.closed && !child.status.borrow().is_final())
            .count()
    }

    /// Creates a child of `parent`, announces it, and starts its first turn on `request.prompt`.
    pub async fn spawn(
        self: &Arc<Self>,
        parent: &Arc<Thread>,
        request: SpawnRequest,
    ) -> Result<(ThreadId, String), AgentError> {
        let (manager, host) = self.parts()?;
        let depth = parent.origin.get().map_or(0, |origin| origin.depth) + 1;
        if depth > MAX_DEPTH {
            return Err(AgentError::TooDeep);
        }
        if self.running() >= MAX_RUNNING_AGENTS {
            return Err(AgentError::TooManyRunning);
        }
        let nickname = self.free_nickname(&parent.id);
        let mut settings = parent.settings();
        if let Some(model) = request.model.filter(|m| !m.is_empty()) {
            settings.model = model;
        }
        if let Some(effort) = request.reasoning_effort.filter(|e| !e.is_empty()) {
            settings.reasoning_effort = Some(effort);
        }
        let origin = AgentOrigin {
            parent_thread_id: parent.id.clone(),
            depth,
            nickname: Some(nickname.clone()),
        };
        let history = if request.fork_context {
            parent.history()
        } else {
            Vec::new()
        };
        let spawn = manager
            .start_child(child_settings(settings, depth), &origin, history)
            .await?;
        let child = spawn.thread.clone();
        self.register(
            &child,
            &parent.id,
            nickname.clone(),
            AgentStatus::PendingInit,
        );
        host.attach(parent.id.clone(), spawn).await;
        // The child runs its own copy of each of its parent's MCP servers (the reference does
        // the same): its calls, progress and elicitations are its own, and closing it stops its
        // servers, never the parent's. Started after the announcement, as for a client's
        // thread, and before its turn, whose first request waits for servers still starting.
        child.start_mcp_servers().await;
        self.start_turn(&child, request.prompt, &request.root_turn)?;
        Ok((child.id.clone(), nickname))
    }

    /// A nickname none of `parent`'s children has.
    fn free_nickname(&self, parent: &ThreadId) -> String {
        let children = self.children();
        let taken: Vec<&str> = children
            .values()
            .filter(|child| &child.parent == parent)
            .map(|child| child.nickname.as_str())
            .collect();
        let count = taken.len();
        NICKNAMES
            .iter()
            .find(|name| !taken.contains(name))
            .map(|name| (*name).to_string())
            .unwrap_or_else(|| format!("Agent {}", count + 1))
    }

    /// Remembers a loaded child and starts watching its turns.
    fn register(
        self: &Arc<Self>,
        child: &Arc<Thread>,
        parent: &ThreadId,
        nickname: String,
        status: AgentStatus,
    ) {
        let (sender, _) = watch::channel(status);
        self.children().insert(
            child.id.clone(),
            Child {
                parent: parent.clone(),
                nickname,
                status: sender,
                closed: false,
                root_turn: None,
            },
        );
        let mut ends = child.turn_ends.subscribe();
        ends.mark_unchanged();
        let control = Arc::downgrade(self);
        let child_id = child.id.clone();
        // Ends with the child thread (its sender goes with it).
        tokio::spawn(async move {
            while ends.changed().await.is_ok() {
                let status = ends.borrow_and_update().status.clone();
                let Some(control) = control.upgrade() else {
                    return;
                };
                control.child_turn_ended(&child_id, status).await;
            }
        });
    }

    async fn child_turn_ended(&self, child_id: &ThreadId, status: AgentStatus) {
        let parent = {
            let children = self.children();
            let Some(child) = children.get(child_id) else {
                return;
            };
            child.status.send_replace(status.clone());
            child.parent.clone()
        };
        if matches!(status, AgentStatus::Interrupted) {
            return;
        }
        let Ok((manager, _)) = self.parts() else {
            return;
        };
        if let Ok(parent) = manager.loaded(&parent) {
            parent
                .deliver_to_model(notification(child_id, &status))
                .await;
        }
    }

    fn set_status(&self, child_id: &ThreadId, status: AgentStatus) {
        if let Some(child) = self.children().get(child_id) {
            child.status.send_replace(status);
        }
    }

    /// The parent turn that gave `child` its current turn.
    pub fn root_turn_of(&self, child: &ThreadId) -> Option<TurnId> {
        self.children().get(child)?.root_turn.clone()
    }

    fn start_turn(
        &self,
        child: &Arc<Thread>,
        prompt: String,
        root_turn: &TurnId,
    ) -> Result<TurnId, AgentError> {
        if let Some(record) = self.children().get_mut(&child.id) {
            record.root_turn = Some(root_turn.clone());
        }
        self.set_status(&child.id, AgentStatus::Running);
        let started = child.start_turn(PreparedInput::text(prompt), None, None)?;
        if let Some(gate) = started.gate {
            gate.open();
        }
        Ok(started.turn_id)
    }

    /// The status of `id` as a tool reports it: `NotFound` for an unknown or closed child.
    pub fn status(&self, id: &str) -> AgentStatus {
        let Ok(id) = ThreadId::parse(id) else {
            return AgentStatus::NotFound;
        };
        match self.children().get(&id) {
            Some(child) if !child.closed => child.status.borrow().clone(),
            _ => AgentStatus::NotFound,
        }
    }

    /// A receiver of `id`'s status, `None` for an unknown or closed child.
    pub fn watch(&self, id: &str) -> Option<watch::Receiver<AgentStatus>> {
        let id = ThreadId::parse(id).ok()?;
        let children = self.children();
        let child = children.get(&id).filter(|child| !child.closed)?;
        Some(child.status.subscribe())
    }

    fn loaded_child(&self, id: &str) -> Result<Arc<Thread>, AgentError> {
        let not_found = || AgentError::NotFound(id.to_string());
        let thread_id = ThreadId::parse(id).map_err(|_| not_found())?;
        if self
            .children()
            .get(&thread_id)
            .is_none_or(|child| child.closed)
        {
            return Err(not_found());
        }
        let (manager, _) = self.parts()?;
        manager.loaded(&thread_id).map_err(|_| not_found())
    }

    /// `send_input`: a new turn on an idle child; joins a running one, or with `interrupt`
    /// ends it first and starts a new one. The id of the turn the input went to.
    pub async fn send_input(
        &self,
        id: &str,
        message: String,
        interrupt: bool,
        root_turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<TurnId, AgentError> {
        let child = self.loaded_child(id)?;
        if let Some(turn_id) = child.active_turn_id() {
            if !interrupt {
                let input = PreparedInput::text(message.clone());
                if let Ok(turn_id) = child.steer(&turn_id, input, None) {
                    self.set_status(&child.id, AgentStatus::Running);
                    return Ok(turn_id);
                }
            } else {
                let mut ends = child.turn_ends.subscribe();
                let ended = |note: &TurnEndNote| note.last_turn.as_ref() == Some(&turn_id);
                if child.interrupt(&turn_id).is_ok() {
                    tokio::select! {
                        _ = ends.wait_for(ended) => {}
                        _ = cancel.cancelled() => return Err(AgentError::NotFound(id.to_string())),
                    }
                }
            }
        }
        self.start_turn(&child, message, root_turn)
    }

    /// `close_agent`: interrupts and unloads the child; its status before.
    pub async fn close(&self, id: &str) -> Result<AgentStatus, AgentError> {
        let previous = self.status(id);
        let child = self.loaded_child(id)?;
        let (_, host) = self.parts()?;
        let child_id = child.id.clone();
        drop(child);
        if let Some(record) = self.children().get_mut(&child_id) {
            record.closed = true;
            record.status.send_replace(AgentStatus::Shutdown);
        }
        host.detach(child_id).await;
        Ok(previous)
    }

    /// `resume_agent`: loads a closed (or not loaded) child of `parent` from its rollout.
    pub async fn resume(
        self: &Arc<Self>,
        parent: &Arc<Thread>,
        id: &str,
    ) -> Result<AgentStatus, AgentError> {
        let not_found = || AgentError::NotFound(id.to_string());
        let thread_id = ThreadId::parse(id).map_err(|_| not_found())?;
        let (manager, host) = self.parts()?;
        if let Ok(child) = manager.loaded(&thread_id) {
            let known = match self.children().get_mut(&thread_id) {
                Some(record) => {
                    record.closed = false;
                    true
                }
                None => false,
            };
            // Loaded by a client (`thread/resume`) rather than by this parent's tools.
            if !known {
                let origin = child.origin().ok_or_else(not_found)?;
                if origin.parent_thread_id != parent.id {
                    return Err(not_found());
                }
                let nickname = origin.nickname.clone().unwrap_or_default();
                let status = last_message(&child.history())
                    .map_or(AgentStatus::PendingInit, |text| {
                        AgentStatus::Completed(Some(text))
                    });
                self.register(&child, &parent.id, nickname, status);
            }
            return Ok(self.status(id));
        }
        let index = manager.thread_index();
        let lookup = thread_id.to_string();
        let entry = tokio::task::spawn_blocking(move || index.get(&lookup))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
            .ok_or_else(not_found)?;
        let path = entry.path.clone();
        let contents = tokio::task::spawn_blocking(move || read_rollout(&path))
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(not_found)?;
        let origin = origin_in(&contents.items).ok_or_else(not_found)?;
        if origin.parent_thread_id != parent.id {
            return Err(not_found());
        }
        let mut settings = parent.settings();
        settings.model = contents.meta.model.clone();
        let spawn = manager.resume_child(&contents, child_settings(settings, origin.depth))?;
        let child = spawn.thread.clone();
        let status = last_message(&child.history()).map_or(AgentStatus::PendingInit, |text| {
            AgentStatus::Completed(Some(text))
        });
        let nickname = origin.nickname.clone().unwrap_or_default();
        self.register(&child, &parent.id, nickname, status.clone());
        host.attach(parent.id.clone(), spawn).await;
        child.start_mcp_servers().await;
        Ok(status)
    }
}

/// A child's settings: its parent's, without the sub-agent tools once it is as deep as allowed.
pub(crate) fn child_settings(mut settings: ThreadSettings, depth: i32) -> ThreadSettings {
    if depth >= MAX_DEPTH {
        let mut tools = settings.model_catalog.tool_config().clone();
        tools.switches.insert(NAMESPACE.to_string(), false);
        settings.model_catalog =
            Arc::new((*settings.model_catalog).clone().with_tool_config(tools));
    }
    settings
}

/// The text of the last assistant message of `history`.
fn last_message(history: &[ResponseItem]) -> Option<String> {
    history.iter().rev().find_map(|item| match item {
        ResponseItem::Message { role, .. } if role == "assistant" => item.message_text(),
        _ => None,
    })
}

/// The control that made `thread` (its `agents` field holds it as `Any`, see there).
pub(crate) fn control_of(thread: &Thread) -> Option<Arc<AgentControl>> {
    thread.agents.get()?.clone().downcast::<AgentControl>().ok()
}
