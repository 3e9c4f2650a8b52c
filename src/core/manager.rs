//! The thread manager: creates, loads and finds threads, and shuts them all down.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::client::{ModelClient, ProviderInfo};
use crate::rollout::fork::fork_items;
use crate::rollout::paths::rollout_path;
use crate::rollout::{archive, delete};
use crate::rollout::{
    read_rollout, IndexEntry, RolloutContents, RolloutError, RolloutItem, RolloutWriter,
    SessionMeta, ThreadIndex,
};
use crate::wire::{ResponseItem, TokenUsage};

use super::agents::{
    self, AgentControl, AgentHost, AgentOrigin, AgentThreads, SUBAGENT_SOURCE_KIND,
};
use super::error::CoreError;
use super::goal::model::{Goal, GoalRuntime};
use super::ids::{ThreadId, TurnId};
use super::provider_models::ProviderModelLists;
use super::record::ForkedTurnLines;
use super::settings::{PersistedSettings, ThreadSettings};
use super::thread::Thread;
use super::thread_spawn::ThreadSpawn;

/// Core events buffered per thread before the server's projection task takes them. When the
/// client stops reading, this fills and the turn waits: memory stays bounded.
const THREAD_EVENT_CAPACITY: usize = 512;

pub struct ThreadManager {
    home: PathBuf,
    client: ModelClient,
    threads: Mutex<HashMap<ThreadId, Arc<Thread>>>,
    shutdown: CancellationToken,
    /// The thread index shared with other processes on this home; rollout writers keep it current.
    index: Arc<ThreadIndex>,
    /// What each provider said it serves, for `model/list`.
    provider_models: ProviderModelLists,
    /// The sub-agents of every thread here (`core/agents/`).
    agents: Arc<AgentControl>,
}

impl ThreadManager {
    /// `shutdown` is the root of every thread's and turn's token: the caller that owns the
    /// process's lifecycle cancels it to interrupt every turn.
    pub fn new(home: PathBuf, shutdown: CancellationToken) -> Result<ThreadManager, CoreError> {
        let client = ModelClient::new().map_err(|e| CoreError::Startup(e.to_string()))?;
        Ok(ThreadManager {
            client,
            threads: Mutex::new(HashMap::new()),
            shutdown,
            index: Arc::new(ThreadIndex::new(&home)),
            home,
            provider_models: ProviderModelLists::default(),
            agents: Arc::default(),
        })
    }

    /// The models `provider` says it serves (asked at most every few minutes, briefly);
    /// `None` when it could not say.
    pub async fn provider_model_ids(&self, provider: &ProviderInfo) -> Option<Vec<String>> {
        self.provider_models.model_ids(&self.client, provider).await
    }

    /// Lets threads spawn sub-agents, which `host` projects to the clients.
    pub fn enable_agents(self: &Arc<Self>, host: Arc<dyn AgentHost>) {
        let manager: std::sync::Weak<ThreadManager> = Arc::downgrade(self);
        self.agents.bind(manager, host);
    }

    /// Creates a sub-agent's thread: its rollout names its origin, and starts with `history`
    /// (its parent's, when the task forks the context).
    pub(crate) async fn start_subagent_thread(
        &self,
        settings: ThreadSettings,
        origin: &AgentOrigin,
        history: Vec<ResponseItem>,
    ) -> Result<ThreadSpawn, CoreError> {
        let mut items = vec![RolloutItem::SubAgentSpawn {
            parent_thread_id: origin.parent_thread_id.to_string(),
            depth: origin.depth,
            agent_nickname: origin.nickname.clone(),
        }];
        items.extend(history.into_iter().map(RolloutItem::ResponseItem));
        let spawn = self
            .create_thread(settings, false, None, items, Some(SUBAGENT_SOURCE_KIND))
            .await?;
        let _ = spawn.thread.origin.set(origin.clone());
        Ok(spawn)
    }

    /// The sub-agents of the threads here.
    pub fn agents(&self) -> &Arc<AgentControl> {
        &self.agents
    }

    pub fn index(&self) -> &Arc<ThreadIndex> {
        &self.index
    }

    pub fn home(&self) -> &std::path::Path {
        &self.home
    }

    fn threads(&self) -> std::sync::MutexGuard<'_, HashMap<ThreadId, Arc<Thread>>> {
        match self.threads.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Creates a thread. Non-ephemeral threads get their rollout file now, so every id handed out
    /// can be resumed.
    pub async fn start_thread(
        &self,
        settings: ThreadSettings,
        ephemeral: bool,
    ) -> Result<ThreadSpawn, CoreError> {
        self.create_thread(settings, ephemeral, None, Vec::new(), None)
            .await
    }

    /// Creates a thread whose rollout starts with `items` after its session meta; `source` is
    /// the meta's source when not an app-server client's thread.
    async fn create_thread(
        &self,
        settings: ThreadSettings,
        ephemeral: bool,
        forked_from_id: Option<String>,
        items: Vec<RolloutItem>,
        source: Option<&str>,
    ) -> Result<ThreadSpawn, CoreError> {
        let id = ThreadId::new();
        let now = chrono::Utc::now();
        let rollout = if ephemeral {
            None
        } else {
            let path = rollout_path(&self.home, id.as_str(), now);
            let writer = RolloutWriter::create(&path, Some(self.index.clone()))
                .map_err(CoreError::Storage)?;
            let meta = SessionMeta {
                id: id.to_string(),
                created_at: now.timestamp(),
                cwd: settings.cwd.display().to_string(),
                model: settings.model.clone(),
                model_provider: settings.provider.id.clone(),
                originator: Some(settings.originator.clone()),
                cli_version: env!("CARGO_PKG_VERSION").to_string(),
                forked_from_id: forked_from_id.clone(),
                source: Some(source.unwrap_or("appServer").to_string()),
                settings: Some(settings.persisted().to_value()),
            };
            writer.append(RolloutItem::SessionMeta(meta)).await?;
            for item in &items {
                writer.append(item.clone()).await?;
            }
            if !items.is_empty() {
                writer.flush().await?;
            }
            Some(writer)
        };
        let loaded = LoadedState::from_items(&items);
        let started_empty = items.is_empty() && forked_from_id.is_none() && source.is_none();
        let spawn = self.insert_thread(
            id,
            now.timestamp(),
            ephemeral,
            forked_from_id,
            settings,
            rollout,
            loaded,
        );
        if started_empty {
            spawn.thread.provider_contact.mark_started_empty();
        }
        Ok(spawn)
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the three callers (start, resume, fork) each fill every field from a different \
                  source; a struct built once per call would only rename them"
    )]
    fn insert_thread(
        &self,
        id: ThreadId,
        created_at: i64,
        ephemeral: bool,
        forked_from_id: Option<String>,
        settings: ThreadSettings,
        rollout: Option<RolloutWriter>,
        loaded: LoadedState,
    ) -> ThreadSpawn {
        let (events_tx, events_rx) = mpsc::channel(THREAD_EVENT_CAPACITY);
        let thread = Arc::new(Thread::new(
            id.clone(),
            created_at,
            ephemeral,
            forked_from_id,
            settings,
            loaded.history,
            rollout,
            events_tx,
            self.client.clone(),
            self.shutdown.child_token(),
        ));
        {
            let mut state = thread.state();
            state.name = loaded.name;
            state.total_usage = loaded.total_usage;
            state.reported_context_tokens = loaded.reported_context_tokens;
            state.goal = GoalRuntime::restored(loaded.goal, loaded.total_usage.total_tokens);
        }
        let control: Arc<dyn std::any::Any + Send + Sync> = self.agents.clone();
        let _ = thread.agents.set(control);
        self.threads().insert(id, thread.clone());
        ThreadSpawn { thread, events_rx }
    }

    /// Loads a persisted thread from its rollout and takes the rollout's write lock: a thread
    /// another process holds fails with [`CoreError::ThreadBusy`].
    pub fn resume_thread(
        &self,
        contents: &RolloutContents,
        settings: ThreadSettings,
    ) -> Result<ThreadSpawn, CoreError> {
        let id = ThreadId::parse(&contents.meta.id)?;
        if self.threads().contains_key(&id) {
            return Err(CoreError::InvalidInput(format!(
                "thread {id} is already loaded"
            )));
        }
        // A sub-agent keeps its origin, and at the depth bound stays without the agent tools.
        let origin = agents::origin_in(&contents.items);
        let settings = match &origin {
            Some(origin) => agents::child_settings(settings, origin.depth),
            None => settings,
        };
        let entry = IndexEntry::from_contents(contents, false);
        let writer = RolloutWriter::open_append(&contents.path, Some(self.index.clone()), entry)
            .map_err(|error| rollout_error(&id, error))?;
        let spawn = self.insert_thread(
            id,
            contents.meta.created_at,
            false,
            contents.meta.forked_from_id.clone(),
            settings,
            Some(writer),
            LoadedState::from_items(&contents.items),
        );
        if let Some(origin) = origin {
            let _ = spawn.thread.origin.set(origin);
        }
        // What the file says, so overrides given to this resume are recorded by the next turn.
        spawn.thread.state().persisted_settings = PersistedSettings::from_rollout(contents);
        Ok(spawn)
    }

    /// Creates a new thread holding a copy of `source`'s turns and history (up to `last_turn_id`,
    /// inclusive); an unfinished turn is copied as interrupted.
    pub async fn fork_thread(
        &self,
        source: &RolloutContents,
        last_turn_id: Option<&TurnId>,
        settings: ThreadSettings,
        ephemeral: bool,
    ) -> Result<ThreadSpawn, CoreError> {
        let lines = ForkedTurnLines {
            now: chrono::Utc::now().timestamp(),
        };
        let mut items = fork_items(&source.items, last_turn_id.map(TurnId::as_str), &lines)
            .map_err(|error| CoreError::InvalidInput(error.to_string()))?;
        // The fork's own session meta records the settings it starts with; the source's
        // changes would override them on a later resume.
        items.retain(|item| !matches!(item, RolloutItem::SettingsChanged { .. }));
        self.create_thread(
            settings,
            ephemeral,
            Some(source.meta.id.clone()),
            items,
            None,
        )
        .await
    }

    /// Moves a (not loaded) thread's rollout to the archive, under its lock.
    pub async fn archive_thread(&self, thread_id: &ThreadId) -> Result<IndexEntry, CoreError> {
        let (home, index, id) = (self.home.clone(), self.index.clone(), thread_id.to_string());
        run_blocking(thread_id, move || {
            archive::archive_thread(&home, &index, &id)
        })
        .await
    }

    /// Moves an archived thread's rollout back (without loading it).
    pub async fn unarchive_thread(&self, thread_id: &ThreadId) -> Result<IndexEntry, CoreError> {
        let (home, index, id) = (self.home.clone(), self.index.clone(), thread_id.to_string());
        run_blocking(thread_id, move || {
            archive::unarchive_thread(&home, &index, &id)
        })
        .await
    }

    /// Deletes a (not loaded) thread's rollout, live or archived, and its index entry.
    pub async fn delete_thread(&self, thread_id: &ThreadId) -> Result<(), CoreError> {
        let (home, index, id) = (self.home.clone(), self.index.clone(), thread_id.to_string());
        run_blocking(thread_id, move || {
            delete::delete_thread(&home, &index, &id).map(|_| ())
        })
        .await
    }

    /// Names a thread that is not loaded here: appends the name line under the rollout's lock,
    /// as a resume would (a thread another process holds is busy).
    pub async fn name_persisted_thread(
        &self,
        thread_id: &ThreadId,
        name: String,
    ) -> Result<(), CoreError> {
        self.append_to_persisted_thread(thread_id, RolloutItem::ThreadName { name })
            .await
    }

    /// Appends one line to a thread that is not loaded here, under the rollout's lock, as a
    /// resume would (a thread another process holds is busy).
    pub async fn append_to_persisted_thread(
        &self,
        thread_id: &ThreadId,
        line: RolloutItem,
    ) -> Result<(), CoreError> {
        let index = self.index.clone();
        let id = thread_id.to_string();
        let lookup = index.clone();
        let entry = run_blocking(thread_id, move || lookup.get(&id))
            .await?
            .filter(|entry| entry.path.exists())
            .ok_or_else(|| CoreError::ThreadNotFound(thread_id.to_string()))?;
        let path = entry.path.clone();
        let contents = run_blocking(thread_id, move || read_rollout(&path)).await?;
        let writer = RolloutWriter::open_append(
            &entry.path,
            Some(index),
            IndexEntry::from_contents(&contents, entry.archived),
        )
        .map_err(|e| rollout_error(thread_id, e))?;
        let written = writer.append(line).await;
        let closed = writer.close().await;
        written.and(closed).map_err(|e| rollout_error(thread_id, e))
    }

    /// Unloads a thread: interrupts its turn, waits for it to end, and closes its rollout
    /// (releasing the lock). Returns the thread if it was loaded.
    pub async fn unload_thread(&self, thread_id: &ThreadId) -> Option<Arc<Thread>> {
        let thread = self.threads().remove(thread_id)?;
        thread.shutdown().await;
        thread.close_rollout().await;
        Some(thread)
    }

    /// A loaded thread by id.
    pub fn get(&self, thread_id: &ThreadId) -> Result<Arc<Thread>, CoreError> {
        self.threads()
            .get(thread_id)
            .cloned()
            .ok_or_else(|| CoreError::ThreadNotFound(thread_id.to_string()))
    }

    pub fn loaded_thread_ids(&self) -> Vec<ThreadId> {
        let mut ids: Vec<ThreadId> = self.threads().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Interrupts every running turn, waits for them to record their end, flushes rollouts.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let threads: Vec<Arc<Thread>> = self.threads().values().cloned().collect();
        futures::future::join_all(threads.iter().map(|thread| thread.shutdown())).await;
    }
}

/// Runs blocking rollout work off the async runtime, mapping its errors for `thread_id`.
async fn run_blocking<T: Send + 'static>(
    thread_id: &ThreadId,
    work: impl FnOnce() -> Result<T, RolloutError> + Send + 'static,
) -> Result<T, CoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CoreError::Internal(format!("rollout worker: {e}")))?
        .map_err(|e| rollout_error(thread_id, e))
}

/// Rollout failures in core's terms; the reference's texts for the cases clients see.
fn rollout_error(thread_id: &ThreadId, error: RolloutError) -> CoreError {
    match error {
        RolloutError::NotFound(_) => CoreError::NoRollout(thread_id.to_string()),
        RolloutError::Busy(_) => CoreError::ThreadBusy(thread_id.to_string()),
        other => CoreError::Storage(other),
    }
}

/// What a thread's persisted lines say about its live state.
struct LoadedState {
    history: Vec<ResponseItem>,
    name: Option<String>,
    /// The running total of the last persisted usage line, so the next turn counts on from it.
    total_usage: TokenUsage,
    /// What the provider last reported, as the live thread keeps it for automatic compaction
    /// (see `ThreadState::reported_context_tokens`).
    reported_context_tokens: Option<i64>,
    /// The goal the last `thread_goal` line left (none once cleared).
    goal: Option<Goal>,
}

impl LoadedState {
    fn from_items(items: &[RolloutItem]) -> LoadedState {
        let mut state = LoadedState {
            history: Vec::new(),
            name: None,
            total_usage: TokenUsage::default(),
            reported_context_tokens: None,
            goal: None,
        };
        // A compaction writes its `compacted` line and right after it a usage line whose `last`
        // is its own estimate of the compacted request, not a provider's count: that one is
        // skipped, as the live thread never took it.
        let mut after_compaction = false;
        for item in items {
            let just_compacted = std::mem::take(&mut after_compaction);
            match item {
                RolloutItem::ResponseItem(response_item) => state.history.push(
                    super::turn::forget_legacy_assigned_id(response_item.clone()),
                ),
                RolloutItem::Compacted {
                    replacement_history,
                    ..
                } => {
                    state.history = replacement_history
                        .iter()
                        .cloned()
                        .map(super::turn::forget_legacy_assigned_id)
                        .collect();
                    state.reported_context_tokens = None;
                    after_compaction = true;
                }
                RolloutItem::HistoryReverted {
                    replacement_history,
                    ..
                } => {
                    state.history = replacement_history.clone();
                    // The provider's last count was of the longer history.
                    state.reported_context_tokens = None;
                }
                RolloutItem::ThreadName { name } => state.name = Some(name.clone()),
                RolloutItem::ThreadGoal { goal } => state.goal = stored_goal(goal.as_ref()),
                RolloutItem::TokenUsage { total, last, .. } => {
                    state.total_usage = *total;
                    // A response that reported no usage leaves `last` empty, and the live
                    // thread's count unchanged.
                    if !just_compacted && last.total_tokens > 0 {
                        state.reported_context_tokens = Some(last.total_tokens);
                    }
                }
                _ => {}
            }
        }
        state
    }
}

/// The model-visible history a rollout's first `end` lines leave (what a revert restores).
pub(crate) fn history_of(items: &[RolloutItem]) -> Vec<ResponseItem> {
    LoadedState::from_items(items).history
}

/// A goal as a `thread_goal` line stored it; one this build cannot read counts as none.
pub(crate) fn stored_goal(goal: Option<&serde_json::Value>) -> Option<Goal> {
    serde_json::from_value(goal?.clone()).ok()
}

/// The goal a rollout's lines leave (`thread/goal/get` of a thread that is not loaded).
pub fn goal_in_rollout(items: &[RolloutItem]) -> Option<Goal> {
    items.iter().rev().find_map(|item| match item {
        RolloutItem::ThreadGoal { goal } => Some(stored_goal(goal.as_ref())),
        _ => None,
    })?
}

/// The control of sub-agents reaches the threads through this seam (see `agents::types`).
impl AgentThreads for ThreadManager {
    fn loaded(&self, thread_id: &ThreadId) -> Result<Arc<Thread>, CoreError> {
        self.get(thread_id)
    }

    fn thread_index(&self) -> Arc<ThreadIndex> {
        self.index.clone()
    }

    fn start_child<'a>(
        &'a self,
        settings: ThreadSettings,
        origin: &'a AgentOrigin,
        history: Vec<ResponseItem>,
    ) -> BoxFuture<'a, Result<ThreadSpawn, CoreError>> {
        Box::pin(self.start_subagent_thread(settings, origin, history))
    }

    fn resume_child(
        &self,
        contents: &RolloutContents,
        settings: ThreadSettings,
    ) -> Result<ThreadSpawn, CoreError> {
        self.resume_thread(contents, settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_line(last_total: i64) -> RolloutItem {
        RolloutItem::TokenUsage {
            turn_id: "t".into(),
            total: TokenUsage::default(),
            last: TokenUsage {
                total_tokens: last_total,
                ..TokenUsage::default()
            },
            model_context_window: None,
        }
    }

    /// Invariant: a resumed thread decides automatic compaction on what the live one did — the
    /// provider's last count, none after a compaction (whose own estimate line is not a count),
    /// and a response that reported nothing changes nothing.
    #[test]
    fn the_reported_count_is_read_back_as_the_live_thread_kept_it() {
        let compacted = RolloutItem::Compacted {
            summary: "s".into(),
            replacement_history: vec![ResponseItem::user_text("q")],
        };
        let count = |items: &[RolloutItem]| LoadedState::from_items(items).reported_context_tokens;
        assert_eq!(count(&[]), None);
        assert_eq!(count(&[usage_line(5_000)]), Some(5_000));
        assert_eq!(count(&[usage_line(5_000), usage_line(0)]), Some(5_000));
        assert_eq!(
            count(&[usage_line(5_000), compacted.clone(), usage_line(900)]),
            None
        );
        assert_eq!(
            count(&[compacted, usage_line(900), usage_line(1_200)]),
            Some(1_200)
        );
    }
}
