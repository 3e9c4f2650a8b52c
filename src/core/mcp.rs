//! A thread's MCP servers seen from core: started once the thread is announced, their reports
//! ([`McpEvent`]) turned into thread events, their elicitations into questions for the client.
//! The servers themselves live in [`crate::mcp`]; this file only bridges.

use std::sync::{Arc, Weak};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::{McpEvent, McpServerConfig, McpServers};

use super::approval::{ClientReply, ClientRequestKind};
use super::event::EventMsg;
use super::ids::{ItemId, TurnId};
use super::thread::Thread;

/// Reports waiting to be forwarded; a server's start-up sends two, a busy tool a few progress
/// notes. Progress is dropped (not queued) when this is full.
const MCP_EVENT_CAPACITY: usize = 64;

impl Thread {
    /// Starts the thread's configured MCP servers in the background, once; returns at once.
    /// Called after the thread was announced, so the client hears `thread/started` before any
    /// server's status.
    pub async fn start_mcp_servers(self: &Arc<Thread>) {
        let settings = self.settings();
        if settings.mcp_servers.is_empty() || self.mcp.get().is_some() {
            return;
        }
        let (events_tx, events_rx) = mpsc::channel(MCP_EVENT_CAPACITY);
        let cancel = self.shutdown.child_token();
        tokio::spawn(forward(Arc::downgrade(self), events_rx, cancel.clone()));
        let servers =
            McpServers::start(&settings.mcp_servers, &settings.cwd, events_tx, cancel).await;
        let _ = self.mcp.set(Arc::new(servers));
    }

    /// Applies reloaded configuration to the thread's MCP servers. A server the thread took
    /// from the configuration as it was (`file_before`) follows it as it is now (`file_after`);
    /// one the thread's own request configured stays as it is. New servers start, removed ones
    /// stop, changed or failed ones restart; a live, unchanged one keeps its connection.
    pub async fn reload_mcp_servers(
        self: &Arc<Thread>,
        file_before: &[McpServerConfig],
        file_after: &[McpServerConfig],
    ) {
        let mut next: Vec<McpServerConfig> = self
            .settings()
            .mcp_servers
            .into_iter()
            .filter(|server| !file_before.contains(server))
            .collect();
        for server in file_after {
            if !next.iter().any(|own| own.name == server.name) {
                next.push(server.clone());
            }
        }
        next.sort_by(|a, b| a.name.cmp(&b.name));
        self.update_settings(|settings| settings.mcp_servers = next.clone());
        match self.mcp_servers() {
            Some(servers) => servers.reload(&next).await,
            None => self.start_mcp_servers().await,
        }
    }

    /// The thread's MCP servers, when any were configured.
    pub fn mcp_servers(&self) -> Option<&Arc<McpServers>> {
        self.mcp.get()
    }

    fn active_turn(&self) -> Option<(TurnId, CancellationToken)> {
        let state = self.state();
        state
            .active
            .as_ref()
            .map(|active| (active.turn_id.clone(), active.cancel.clone()))
    }
}

/// Forwards the servers' reports until the thread shuts down or every server is gone.
async fn forward(
    thread: Weak<Thread>,
    mut events_rx: mpsc::Receiver<McpEvent>,
    cancel: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            _ = cancel.cancelled() => return,
            event = events_rx.recv() => match event {
                Some(event) => event,
                None => return,
            },
        };
        let Some(thread) = thread.upgrade() else {
            return;
        };
        match event {
            McpEvent::Startup { server, state } => {
                let _ = thread
                    .events_tx
                    .send(EventMsg::McpStartupStatus { server, state })
                    .await;
            }
            McpEvent::Progress {
                call_id, message, ..
            } => {
                // The item of an MCP call carries the call's id.
                if let Some((turn_id, _)) = thread.active_turn() {
                    let _ = thread
                        .events_tx
                        .send(EventMsg::McpToolCallProgress {
                            turn_id,
                            item_id: ItemId::from(call_id),
                            message,
                        })
                        .await;
                }
            }
            McpEvent::Elicitation {
                server,
                params,
                reply,
            } => {
                // Each question waits on its own: a slow user must not hold up status reports.
                tokio::spawn(async move {
                    let answer = ask(&thread, server, params).await;
                    let _ = reply.send(answer);
                });
            }
        }
    }
}

/// Puts an elicitation to the client and returns the MCP `ElicitResult` to give the server. It
/// belongs to the turn running now, if any; a server may also ask between turns, and the
/// question then belongs to no turn and lasts until the thread shuts down.
async fn ask(thread: &Thread, server: String, params: Value) -> Value {
    let (turn_id, cancel) = match thread.active_turn() {
        Some((turn_id, cancel)) => (Some(turn_id), cancel),
        None => (None, thread.shutdown.clone()),
    };
    let question = ClientRequestKind::McpElicitation { server, params };
    match thread.questions.ask(turn_id, question, &cancel).await {
        ClientReply::Elicitation(answer) => answer,
        ClientReply::Cancelled => json!({"action": "cancel"}),
        ClientReply::Failed(_)
        | ClientReply::Invalid
        | ClientReply::Decision(_)
        | ClientReply::ToolResult(_)
        | ClientReply::UserAnswers(_) => json!({"action": "decline"}),
    }
}
