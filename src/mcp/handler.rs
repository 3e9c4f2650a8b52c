//! The client side of one MCP connection: what openturn tells a server about itself, and what
//! it does with the server's own requests and notifications. Elicitations and progress reports
//! are handed on as [`McpEvent`]s; whoever owns the thread decides how the user sees them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::events::McpEvent;

/// Progress token (as [`progress_key`] spells it) → the id of the call it belongs to.
pub(crate) type ProgressRoutes = Arc<Mutex<HashMap<String, String>>>;

/// How long a progress note may wait for its call to be registered: the server can answer
/// faster than the request's token is recorded.
const PROGRESS_ROUTE_WAIT: Duration = Duration::from_millis(50);

/// One per connection; knows which server it speaks for.
pub(crate) struct OpenturnClient {
    pub server: String,
    pub events_tx: mpsc::Sender<McpEvent>,
    pub progress_routes: ProgressRoutes,
}

/// A progress token as a map key.
pub(crate) fn progress_key(token: &ProgressToken) -> String {
    match serde_json::to_value(token) {
        Ok(Value::String(token)) => token,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

impl OpenturnClient {
    async fn call_of(&self, key: &str) -> Option<String> {
        let deadline = tokio::time::Instant::now() + PROGRESS_ROUTE_WAIT;
        loop {
            let found = match self.progress_routes.lock() {
                Ok(routes) => routes.get(key).cloned(),
                Err(poisoned) => poisoned.into_inner().get(key).cloned(),
            };
            if found.is_some() || tokio::time::Instant::now() >= deadline {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl ClientHandler for OpenturnClient {
    fn get_info(&self) -> ClientConfig {
        let info = json!({
            "protocolVersion": "2025-06-18",
            // Form elicitation reaches the user as `mcpServer/elicitation/request`.
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "openturn", "version": env!("CARGO_PKG_VERSION")},
        });
        serde_json::from_value(info).unwrap_or_default()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        {
            let params = serde_json::to_value(&request).unwrap_or(Value::Null);
            let (reply_tx, reply_rx) = oneshot::channel();
            let event = McpEvent::Elicitation {
                server: self.server.clone(),
                params,
                reply: reply_tx,
            };
            if self.events_tx.send(event).await.is_err() {
                return Ok(declined());
            }
            // The thread answers (or drops the sender, which declines); the server's own
            // cancellation of its request ends the wait too.
            let answer = tokio::select! {
                answer = reply_rx => answer.ok(),
                _ = context.ct.cancelled() => None,
            };
            match answer {
                Some(value) => serde_json::from_value(value).map_err(|error| {
                    ErrorData::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("the client's elicitation answer was not valid: {error}"),
                        None,
                    )
                }),
                None => Ok(declined()),
            }
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        {
            // Progress for a call nobody registered (or one already answered) is dropped.
            let Some(call_id) = self.call_of(&progress_key(&params.progress_token)).await else {
                return;
            };
            let message = params
                .message
                .clone()
                .unwrap_or_else(|| match params.total {
                    Some(total) => format!("{}/{}", params.progress, total),
                    None => format!("{}", params.progress),
                });
            // Progress is advisory: a full queue drops it rather than stall the connection.
            let _ = self.events_tx.try_send(McpEvent::Progress {
                server: self.server.clone(),
                call_id,
                message,
            });
        }
    }
}

fn declined() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Decline)
}
