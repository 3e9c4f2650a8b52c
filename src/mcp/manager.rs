//! The MCP servers of one thread: started together in the background when the thread starts,
//! each in its own task, so `thread/start` never waits on them. Every wait here is bounded: a
//! server gets its start-up timeout, a call its tool timeout, and shutdown a short grace before
//! the child is killed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::config::McpServerConfig;
use super::connection::{connect, Connected};
use super::events::McpEvent;
use super::handler::{progress_key, ProgressRoutes};
use super::status::{McpServerSnapshot, McpTool, StartupState};

/// How long a closed connection may take to end its child before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Why a call could not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpCallError {
    #[error("unknown MCP server `{0}`")]
    UnknownServer(String),
    #[error("MCP server `{server}` is not available: {reason}")]
    Unavailable { server: String, reason: String },
    #[error("the call to `{server}/{tool}` timed out after {seconds} s")]
    Timeout {
        server: String,
        tool: String,
        seconds: f64,
    },
    #[error("the call to `{server}/{tool}` failed: {message}")]
    Failed {
        server: String,
        tool: String,
        message: String,
    },
}

#[derive(Clone)]
pub(super) struct SlotState {
    snapshot: McpServerSnapshot,
    /// Set while the server is ready.
    peer: Option<Peer<RoleClient>>,
}

pub(super) struct Slot {
    pub(super) config: McpServerConfig,
    state_tx: watch::Sender<SlotState>,
    /// The calls in flight on this server, by progress token.
    progress_routes: ProgressRoutes,
    /// Ends this server alone (a reload that removes or restarts it); a child of the
    /// thread's token, so shutting the thread down ends every server.
    pub(super) cancel: CancellationToken,
}

impl Slot {
    pub(super) fn new(config: &McpServerConfig, parent: &CancellationToken) -> Arc<Slot> {
        let (state_tx, _) = watch::channel(SlotState {
            snapshot: empty_snapshot(&config.name, StartupState::Starting),
            peer: None,
        });
        Arc::new(Slot {
            config: config.clone(),
            state_tx,
            progress_routes: ProgressRoutes::default(),
            cancel: parent.child_token(),
        })
    }

    pub(super) fn state(&self) -> StartupState {
        self.state_tx.borrow().snapshot.state.clone()
    }
}

/// A thread's MCP connections.
pub struct McpServers {
    /// The servers in name order. Replaced as a whole by a reload; readers take a copy of the
    /// list (never held across an await).
    pub(super) slots: std::sync::Mutex<Vec<Arc<Slot>>>,
    pub(super) cancel: CancellationToken,
    pub(super) tasks: TaskTracker,
    /// Where a server started later (by a reload) reports, and the folder it runs in.
    pub(super) events_tx: mpsc::Sender<McpEvent>,
    pub(super) thread_cwd: PathBuf,
}

impl McpServers {
    /// Starts every enabled server in the background; their progress arrives on `events_tx`,
    /// beginning with one `Starting` each, sent before this returns.
    pub async fn start(
        configs: &[McpServerConfig],
        thread_cwd: &Path,
        events_tx: mpsc::Sender<McpEvent>,
        cancel: CancellationToken,
    ) -> McpServers {
        let servers = McpServers {
            slots: std::sync::Mutex::new(
                configs
                    .iter()
                    .filter(|config| config.enabled)
                    .map(|config| Slot::new(config, &cancel))
                    .collect(),
            ),
            cancel,
            tasks: TaskTracker::new(),
            events_tx: events_tx.clone(),
            thread_cwd: thread_cwd.to_path_buf(),
        };
        let slots = servers.slots();
        for slot in &slots {
            let _ = events_tx
                .send(McpEvent::Startup {
                    server: slot.config.name.clone(),
                    state: StartupState::Starting,
                })
                .await;
        }
        for slot in slots {
            servers.run(slot);
        }
        servers.tasks.close();
        servers
    }

    /// A copy of the current list of servers.
    pub(super) fn slots(&self) -> Vec<Arc<Slot>> {
        match self.slots.lock() {
            Ok(slots) => slots.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Runs one server's life on the thread's task tracker.
    pub(super) fn run(&self, slot: Arc<Slot>) {
        self.tasks.spawn(run_server(
            slot.clone(),
            self.thread_cwd.clone(),
            self.events_tx.clone(),
            slot.cancel.clone(),
        ));
    }

    /// Waits until no server is still starting, each at most its start-up timeout (and not
    /// past `cancel`).
    pub async fn wait_started(&self, cancel: &CancellationToken) {
        let waits = self.slots().into_iter().map(|slot| {
            let mut state_rx = slot.state_tx.subscribe();
            let limit = slot.config.startup_timeout + Duration::from_secs(1);
            async move {
                let settled =
                    state_rx.wait_for(|state| state.snapshot.state != StartupState::Starting);
                let _ = tokio::time::timeout(limit, settled).await;
            }
        });
        tokio::select! {
            _ = futures::future::join_all(waits) => {}
            _ = cancel.cancelled() => {}
        }
    }

    /// Every server, in name order.
    pub fn snapshots(&self) -> Vec<McpServerSnapshot> {
        self.slots()
            .iter()
            .map(|slot| slot.state_tx.borrow().snapshot.clone())
            .collect()
    }

    /// The tools of each ready server, in name order.
    pub fn ready_tools(&self) -> Vec<(String, Vec<McpTool>)> {
        self.slots()
            .iter()
            .filter_map(|slot| {
                let state = slot.state_tx.borrow();
                (state.snapshot.state == StartupState::Ready)
                    .then(|| (slot.config.name.clone(), state.snapshot.tools.clone()))
            })
            .collect()
    }

    /// Whether any server is configured (the resource helpers are offered then).
    pub fn is_empty(&self) -> bool {
        self.slots().is_empty()
    }

    /// Calls a tool, bounded by the server's tool timeout (the server is told the call was
    /// cancelled when it runs out). Progress the server reports comes back as
    /// [`McpEvent::Progress`] under `call_id`. The result is the MCP `CallToolResult` as JSON.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        call_id: &str,
    ) -> Result<Value, McpCallError> {
        let (peer, timeout) = self.ready_peer(server)?;
        let routes = self.routes(server);
        let timed_out = || McpCallError::Timeout {
            server: server.to_string(),
            tool: tool.to_string(),
            seconds: timeout.as_secs_f64(),
        };
        let failed = |message: String| McpCallError::Failed {
            server: server.to_string(),
            tool: tool.to_string(),
            message,
        };
        let mut params = json!({"name": tool});
        if let Value::Object(_) = arguments {
            params["arguments"] = arguments;
        }
        let params: CallToolRequestParams =
            serde_json::from_value(params).map_err(|e| failed(e.to_string()))?;
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let key = progress_key(&handle.progress_token);
        set_route(&routes, Some((key.clone(), call_id.to_string())), &key);
        // rmcp enforces the timeout (and tells the server); this outer bound is a backstop.
        let response =
            tokio::time::timeout(timeout + Duration::from_secs(1), handle.await_response()).await;
        set_route(&routes, None, &key);
        match response {
            Err(_) | Ok(Err(ServiceError::Timeout { .. })) => Err(timed_out()),
            Ok(Err(error)) => Err(failed(error.to_string())),
            Ok(Ok(ServerResult::CallToolResult(result))) => {
                serde_json::to_value(result).map_err(|e| failed(e.to_string()))
            }
            Ok(Ok(_)) => Err(failed(
                "the server answered with something other than a tool result".to_string(),
            )),
        }
    }

    fn routes(&self, server: &str) -> ProgressRoutes {
        self.slots()
            .iter()
            .find(|slot| slot.config.name == server)
            .map(|slot| slot.progress_routes.clone())
            .unwrap_or_default()
    }

    /// `resources/list` (every page) of one server, or of every ready server; each entry
    /// names its server.
    pub async fn list_resources(
        &self,
        server: Option<&str>,
        templates: bool,
    ) -> Result<Vec<Value>, McpCallError> {
        let names: Vec<String> = match server {
            Some(name) => vec![name.to_string()],
            None => self
                .ready_tools()
                .into_iter()
                .map(|(name, _)| name)
                .collect(),
        };
        let mut listed = Vec::new();
        for name in names {
            let (peer, timeout) = self.ready_peer(&name)?;
            let entries = tokio::time::timeout(timeout, async {
                if templates {
                    let found = peer.list_all_resource_templates().await;
                    found.map(|all| {
                        all.iter()
                            .filter_map(|t| serde_json::to_value(t).ok())
                            .collect::<Vec<_>>()
                    })
                } else {
                    let found = peer.list_all_resources().await;
                    found.map(|all| {
                        all.iter()
                            .filter_map(|r| serde_json::to_value(r).ok())
                            .collect::<Vec<_>>()
                    })
                }
            })
            .await
            .map_err(|_| McpCallError::Timeout {
                server: name.clone(),
                tool: if templates {
                    "resources/templates/list"
                } else {
                    "resources/list"
                }
                .to_string(),
                seconds: timeout.as_secs_f64(),
            })?
            .map_err(|error| McpCallError::Failed {
                server: name.clone(),
                tool: "resources/list".to_string(),
                message: error.to_string(),
            })?;
            for mut entry in entries {
                if let Value::Object(fields) = &mut entry {
                    let mut named = serde_json::Map::new();
                    named.insert("server".into(), Value::String(name.clone()));
                    named.extend(std::mem::take(fields));
                    *fields = named;
                }
                listed.push(entry);
            }
        }
        Ok(listed)
    }

    /// `resources/read` of one server; the MCP `ReadResourceResult` as JSON.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, McpCallError> {
        let (peer, timeout) = self.ready_peer(server)?;
        let failed = |message: String| McpCallError::Failed {
            server: server.to_string(),
            tool: "resources/read".to_string(),
            message,
        };
        let params =
            serde_json::from_value(json!({"uri": uri})).map_err(|e| failed(e.to_string()))?;
        match tokio::time::timeout(timeout, peer.read_resource(params)).await {
            Err(_) => Err(McpCallError::Timeout {
                server: server.to_string(),
                tool: "resources/read".to_string(),
                seconds: timeout.as_secs_f64(),
            }),
            Ok(Err(error)) => Err(failed(error.to_string())),
            Ok(Ok(result)) => serde_json::to_value(result).map_err(|e| failed(e.to_string())),
        }
    }

    /// The server's tool, when the model may call it.
    pub fn tool(&self, server: &str, tool: &str) -> Option<McpTool> {
        let slot = self
            .slots()
            .into_iter()
            .find(|slot| slot.config.name == server)?;
        let state = slot.state_tx.borrow();
        state
            .snapshot
            .tools
            .iter()
            .find(|t| t.name == tool)
            .cloned()
    }

    /// The names of the server's tools the model may call; `None` when the server is not ready.
    pub fn tool_names(&self, server: &str) -> Option<Vec<String>> {
        let slot = self
            .slots()
            .into_iter()
            .find(|slot| slot.config.name == server)?;
        let state = slot.state_tx.borrow();
        (state.snapshot.state == StartupState::Ready).then(|| {
            state
                .snapshot
                .tools
                .iter()
                .map(|t| t.name.clone())
                .collect()
        })
    }

    /// Closes every connection and waits (briefly) for the servers' tasks to end; children
    /// still running after the grace period are killed.
    pub async fn shutdown(&self) {
        self.cancel.cancel();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE * 2, self.tasks.wait()).await;
    }

    fn ready_peer(&self, server: &str) -> Result<(Peer<RoleClient>, Duration), McpCallError> {
        let slot = self
            .slots()
            .into_iter()
            .find(|slot| slot.config.name == server)
            .ok_or_else(|| McpCallError::UnknownServer(server.to_string()))?;
        let state = slot.state_tx.borrow();
        match (&state.peer, &state.snapshot.state) {
            (Some(peer), StartupState::Ready) => Ok((peer.clone(), slot.config.tool_timeout)),
            (_, StartupState::Failed(reason)) => Err(McpCallError::Unavailable {
                server: server.to_string(),
                reason: reason.clone(),
            }),
            _ => Err(McpCallError::Unavailable {
                server: server.to_string(),
                reason: "it is still starting".to_string(),
            }),
        }
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        // Children are killed on drop of their transports; cancelling starts that now.
        self.cancel.cancel();
    }
}

fn empty_snapshot(name: &str, state: StartupState) -> McpServerSnapshot {
    McpServerSnapshot {
        name: name.to_string(),
        state,
        server_info: None,
        capabilities: None,
        tools: Vec::new(),
        resources: Vec::new(),
        resource_templates: Vec::new(),
    }
}

/// One server's life: connect within the start-up timeout, then watch for its end.
async fn run_server(
    slot: Arc<Slot>,
    thread_cwd: PathBuf,
    events_tx: mpsc::Sender<McpEvent>,
    cancel: CancellationToken,
) {
    let config = &slot.config;
    let attempt = tokio::time::timeout(
        config.startup_timeout,
        connect(
            config,
            &thread_cwd,
            events_tx.clone(),
            slot.progress_routes.clone(),
        ),
    );
    let connected = tokio::select! {
        _ = cancel.cancelled() => return,
        attempt = attempt => match attempt {
            Ok(Ok(connected)) => connected,
            Ok(Err(reason)) => return fail(&slot, &events_tx, reason).await,
            Err(_) => {
                let reason = format!(
                    "the server did not finish starting within {} s (startup_timeout_sec)",
                    config.startup_timeout.as_secs_f64()
                );
                return fail(&slot, &events_tx, reason).await;
            }
        },
    };
    let Connected {
        service,
        process,
        server_info,
        capabilities,
        tools,
        resources,
        resource_templates,
    } = connected;
    slot.state_tx.send_replace(SlotState {
        snapshot: McpServerSnapshot {
            name: config.name.clone(),
            state: StartupState::Ready,
            server_info,
            capabilities,
            tools,
            resources,
            resource_templates,
        },
        peer: Some(service.peer().clone()),
    });
    let _ = events_tx
        .send(McpEvent::Startup {
            server: config.name.clone(),
            state: StartupState::Ready,
        })
        .await;
    let stop = service.cancellation_token();
    let ended = service.waiting();
    tokio::pin!(ended);
    tokio::select! {
        _ = &mut ended => {
            if !cancel.is_cancelled() {
                fail(&slot, &events_tx, "the server exited".to_string()).await;
            }
        }
        // The service drops its pipes to the server as it ends, which asks a stdio server to
        // exit; one that ignores its closed stdin is killed after the grace.
        _ = cancel.cancelled() => stop.cancel(),
    }
    if let Some(process) = process {
        process.stop(SHUTDOWN_GRACE).await;
    }
}

async fn fail(slot: &Slot, events_tx: &mpsc::Sender<McpEvent>, reason: String) {
    tracing::warn!(server = %slot.config.name, %reason, "MCP server unavailable");
    let mut snapshot = slot.state_tx.borrow().snapshot.clone();
    snapshot.state = StartupState::Failed(reason.clone());
    slot.state_tx.send_replace(SlotState {
        snapshot,
        peer: None,
    });
    let _ = events_tx
        .send(McpEvent::Startup {
            server: slot.config.name.clone(),
            state: StartupState::Failed(reason),
        })
        .await;
}

/// Adds (`Some`) or removes (`None`) the route of progress token `key`.
fn set_route(routes: &ProgressRoutes, entry: Option<(String, String)>, key: &str) {
    let mut routes = match routes.lock() {
        Ok(routes) => routes,
        Err(poisoned) => poisoned.into_inner(),
    };
    match entry {
        Some((key, call_id)) => {
            routes.insert(key, call_id);
        }
        None => {
            routes.remove(key);
        }
    }
}
