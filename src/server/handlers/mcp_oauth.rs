//! `mcpServer/oauth/login`: starts the OAuth login of a configured streamable-HTTP MCP server
//! (the flow itself is the MCP layer's, [`crate::mcp::oauth`]) and answers with the URL the
//! user opens; the rest of the login runs on its own task, which tells the connection how it
//! ended with `mcpServer/oauthLogin/completed` (after the response, never before). Shutdown
//! ends a login still waiting for its browser.

use std::sync::Arc;
use std::time::Duration;

use crate::core::TurnGate;
use crate::mcp::McpTransportConfig;
use crate::protocol::mcp_oauth::{
    McpServerOauthClientRegistration, McpServerOauthLoginCompletedNotification,
    McpServerOauthLoginParams, McpServerOauthLoginResponse,
};
use crate::protocol::notification::ServerNotification;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::reply::{After, Reply};

/// How long a login waits for the browser when the client does not say.
const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest wait a client may ask for: a forgotten login must end by itself.
const MAX_LOGIN_TIMEOUT: Duration = Duration::from_secs(3600);

async fn mcp_oauth_login(
    context: &Arc<ServerContext>,
    params: McpServerOauthLoginParams,
) -> Reply<McpServerOauthLoginResponse> {
    match start(context, params).await {
        Ok((response, gate)) => Reply::then(response, vec![After::OpenGate(gate)]),
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn start(
    context: &Arc<ServerContext>,
    params: McpServerOauthLoginParams,
) -> Result<(McpServerOauthLoginResponse, TurnGate), HandlerError> {
    if params.client_registration == Some(McpServerOauthClientRegistration::Cimd) {
        return Err(HandlerError::InvalidParams(
            "`clientRegistration`: openturn registers by dynamic client registration (`dcr`) \
             only; it publishes no client ID metadata document"
                .to_string(),
        ));
    }
    let timeout = match params.timeout_secs {
        None => DEFAULT_LOGIN_TIMEOUT,
        Some(secs) if secs > 0 => Duration::from_secs(secs.unsigned_abs()).min(MAX_LOGIN_TIMEOUT),
        Some(secs) => {
            return Err(HandlerError::InvalidParams(format!(
                "`timeoutSecs` must be positive, got {secs}"
            )))
        }
    };
    let config = context.config.reloaded()?;
    let server = config
        .mcp_servers
        .iter()
        .find(|server| server.name == params.name)
        .ok_or_else(|| {
            HandlerError::InvalidRequest(format!("No MCP server named '{}' found.", params.name))
        })?;
    let McpTransportConfig::Http { url, .. } = &server.transport else {
        return Err(HandlerError::InvalidRequest(
            "OAuth login is only supported for streamable HTTP servers.".to_string(),
        ));
    };
    let store = crate::mcp::oauth::store_dir(&config.home);
    let failed = |error: crate::mcp::oauth::OAuthError| {
        HandlerError::Internal(format!(
            "failed to login to MCP server '{}': {error}",
            params.name
        ))
    };
    let started =
        crate::mcp::oauth::start_login(&params.name, url, store, params.scopes.clone(), timeout)
            .await
            .map_err(failed)?;
    let login_id = uuid::Uuid::now_v7().to_string();
    let (gate_tx, gate_rx) = tokio::sync::oneshot::channel();
    let stop = context.lifecycle.handlers_stop.child_token();
    let outgoing = context.outgoing.clone();
    let name = params.name.clone();
    let thread_id = params.thread_id.clone();
    let id = login_id.clone();
    tokio::spawn(async move {
        let ended = tokio::select! {
            ended = started.completion => ended.map_err(|error| error.to_string()),
            () = stop.cancelled() => Err("the login was cancelled: the server is shutting down".to_string()),
        };
        // The notification follows the response: wait for it to be out.
        if gate_rx.await.is_err() {
            return;
        }
        let completed = McpServerOauthLoginCompletedNotification {
            name,
            thread_id,
            login_id: Some(id),
            success: ended.is_ok(),
            error: ended.err(),
        };
        let _ = outgoing
            .send_notification(&ServerNotification::McpServerOauthLoginCompleted(completed))
            .await;
    });
    Ok((
        McpServerOauthLoginResponse {
            authorization_url: started.authorization_url,
            login_id: Some(login_id),
        },
        TurnGate(gate_tx),
    ))
}

handler!(McpServerOauthLogin, |context, params| mcp_oauth_login(
    context, params
)
.await);
