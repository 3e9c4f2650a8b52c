//! Bringing a thread's running MCP servers in line with new configuration
//! (`config/mcpServer/reload`): a new server starts, a removed or disabled one stops, a changed
//! one restarts, and so does one that failed or exited; a server whose settings did not change
//! and that is starting or connected keeps its connection. Starts report like the first ones
//! (`Starting`, then `Ready` or `Failed`).

use std::sync::Arc;

use super::config::McpServerConfig;
use super::events::McpEvent;
use super::manager::{McpServers, Slot};
use super::status::StartupState;

impl McpServers {
    /// Applies `configs` (the thread's whole new list) to the running servers.
    pub async fn reload(&self, configs: &[McpServerConfig]) {
        let current = self.slots();
        let mut next: Vec<Arc<Slot>> = Vec::new();
        let mut started: Vec<Arc<Slot>> = Vec::new();
        for config in configs.iter().filter(|config| config.enabled) {
            let keep = current.iter().find(|slot| {
                slot.config == *config && !matches!(slot.state(), StartupState::Failed(_))
            });
            match keep {
                Some(slot) => next.push(slot.clone()),
                None => {
                    let slot = Slot::new(config, &self.cancel);
                    started.push(slot.clone());
                    next.push(slot);
                }
            }
        }
        next.sort_by(|a, b| a.config.name.cmp(&b.config.name));
        let stopped: Vec<Arc<Slot>> = current
            .into_iter()
            .filter(|slot| !next.iter().any(|kept| Arc::ptr_eq(kept, slot)))
            .collect();
        match self.slots.lock() {
            Ok(mut slots) => *slots = next,
            Err(poisoned) => *poisoned.into_inner() = next,
        }
        // The old connection of a restarted server ends before its successor reports.
        for slot in &stopped {
            tracing::info!(server = %slot.config.name, "stopping MCP server on reload");
            slot.cancel.cancel();
        }
        for slot in &started {
            let _ = self
                .events_tx
                .send(McpEvent::Startup {
                    server: slot.config.name.clone(),
                    state: StartupState::Starting,
                })
                .await;
        }
        for slot in started {
            self.run(slot);
        }
    }
}
