//! The thread manager: creates, loads and finds threads, and shuts them all down.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::client::ModelClient;
use crate::rollout::paths::rollout_path;
use crate::rollout::{RolloutItem, RolloutWriter, SessionMeta};

use super::error::CoreError;
use super::event::EventMsg;
use super::settings::ThreadSettings;
use super::thread::{Thread, ThreadId};

/// Core events buffered per thread before the server's projection task takes them. When the
/// client stops reading, this fills and the turn waits: memory stays bounded.
const THREAD_EVENT_CAPACITY: usize = 512;

/// A freshly created or loaded thread, with the receiver of its events for the server.
pub struct ThreadSpawn {
    pub thread: Arc<Thread>,
    pub events_rx: mpsc::Receiver<EventMsg>,
}

pub struct ThreadManager {
    home: PathBuf,
    client: ModelClient,
    threads: Mutex<HashMap<String, Arc<Thread>>>,
    shutdown: CancellationToken,
}

impl ThreadManager {
    pub fn new(home: PathBuf) -> Result<ThreadManager, CoreError> {
        let client = ModelClient::new().map_err(|e| CoreError::Startup(e.to_string()))?;
        Ok(ThreadManager {
            home,
            client,
            threads: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
        })
    }

    pub fn home(&self) -> &std::path::Path {
        &self.home
    }

    fn threads(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Thread>>> {
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
        let id = ThreadId::new();
        let now = chrono::Utc::now();
        let rollout = if ephemeral {
            None
        } else {
            let path = rollout_path(&self.home, id.as_str(), now);
            let writer =
                RolloutWriter::create(&path).map_err(|e| CoreError::Storage(e.to_string()))?;
            let meta = SessionMeta {
                id: id.to_string(),
                created_at: now.timestamp(),
                cwd: settings.cwd.display().to_string(),
                model: settings.model.clone(),
                model_provider: settings.provider.id.clone(),
                originator: Some(settings.originator.clone()),
                cli_version: env!("CARGO_PKG_VERSION").to_string(),
                forked_from_id: None,
                source: Some("appServer".to_string()),
            };
            writer
                .append(RolloutItem::SessionMeta(meta))
                .await
                .map_err(|e| CoreError::Storage(e.to_string()))?;
            Some(writer)
        };
        let (events_tx, events_rx) = mpsc::channel(THREAD_EVENT_CAPACITY);
        let thread = Arc::new(Thread::new(
            id.clone(),
            now.timestamp(),
            ephemeral,
            None,
            settings,
            Vec::new(),
            rollout,
            events_tx,
            self.client.clone(),
            self.shutdown.child_token(),
        ));
        self.threads().insert(id.to_string(), thread.clone());
        Ok(ThreadSpawn { thread, events_rx })
    }

    /// A loaded thread by id.
    pub fn get(&self, thread_id: &str) -> Result<Arc<Thread>, CoreError> {
        let id = ThreadId::parse(thread_id)?;
        self.threads()
            .get(id.as_str())
            .cloned()
            .ok_or_else(|| CoreError::ThreadNotFound(thread_id.to_string()))
    }

    pub fn loaded_thread_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.threads().keys().cloned().collect();
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
