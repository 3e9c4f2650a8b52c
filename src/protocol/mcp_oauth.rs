//! `mcpServer/oauth/login` and its `mcpServer/oauthLogin/completed` notification: logging in to
//! a streamable-HTTP MCP server that needs OAuth.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the client is registered with the authorization server for this login.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerOauthClientRegistration {
    /// Whatever the server supports (openturn: dynamic registration).
    Auto,
    /// A client ID metadata document; openturn refuses it (it publishes none).
    Cimd,
    /// Dynamic client registration (RFC 7591).
    Dcr,
}

/// `mcpServer/oauth/login` params.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginParams {
    /// The `[mcp_servers.NAME]` server to log in to.
    pub name: String,
    /// Echoed in the completion notification.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Scopes to ask for; the server's advertised ones when absent.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// How long to wait for the browser to come back (default 300 s).
    #[serde(default)]
    pub timeout_secs: Option<i64>,
    #[serde(default)]
    pub client_registration: Option<McpServerOauthClientRegistration>,
    /// Accepted for compatibility: openturn selects servers by name.
    #[serde(default)]
    pub environment_id: Option<String>,
}

/// `mcpServer/oauth/login` result: the URL for the user's browser; the login ends with
/// `mcpServer/oauthLogin/completed`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginResponse {
    pub authorization_url: String,
    pub login_id: Option<String>,
}

/// `mcpServer/oauthLogin/completed`: how a login ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginCompletedNotification {
    pub name: String,
    pub thread_id: Option<String>,
    pub login_id: Option<String>,
    pub success: bool,
    /// Why it failed; never holds a token.
    pub error: Option<String>,
}
