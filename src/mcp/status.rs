//! Where each server of a thread stands, and what it offers once ready.

use serde_json::Value;

/// A server's start-up state.
#[derive(Debug, Clone, PartialEq)]
pub enum StartupState {
    Starting,
    Ready,
    /// The reason, for the user: never an environment value or a token.
    Failed(String),
}

/// One tool of a server, as it listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Value,
    /// The tool as the server described it (`tools/list` entry), for status listings.
    pub listing: Value,
    /// The server marked it `readOnlyHint`: it changes nothing, so it runs without asking.
    pub read_only: bool,
}

/// A server as `mcpServerStatus/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerSnapshot {
    pub name: String,
    pub state: StartupState,
    pub server_info: Option<Value>,
    pub capabilities: Option<Value>,
    /// The tools the model may call (after `enabled_tools` / `disabled_tools`).
    pub tools: Vec<McpTool>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
}
