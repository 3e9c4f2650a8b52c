//! `initialize`: the handshake.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub client_info: ClientInfo,
    #[serde(default)]
    pub capabilities: Option<InitializeCapabilities>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    pub version: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeCapabilities {
    #[serde(default)]
    pub experimental_api: bool,
    /// Exact notification method names this connection does not want.
    #[serde(default)]
    pub opt_out_notification_methods: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    pub user_agent: String,
    pub codex_home: String,
    /// `unix` or `windows`.
    pub platform_family: String,
    /// `linux`, `macos` or `windows`.
    pub platform_os: String,
    /// Extra (openturn): the protocol version implemented, so clients can detect drift.
    pub protocol_version: String,
    /// Extra (openturn): the server's name and the reference version whose protocol it
    /// implements (what clients compare against their minimum).
    pub server_info: ServerInfo,
    /// Extra (openturn): openturn's own release version.
    pub openturn_version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}
