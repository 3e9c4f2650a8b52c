//! MCP servers as clients see them: start-up status, the status listing, tool-call progress, and
//! the elicitations a server (or openturn, asking to run a server's tool) puts to the user.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `mcpServer/startupStatus/updated`: a server of a thread is starting, ready, or failed (to
/// start, or later: a server that dies is reported `failed` too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStartupStatusUpdatedNotification {
    pub thread_id: Option<String>,
    pub name: String,
    /// `starting`, `ready`, `failed` or `cancelled`.
    pub status: String,
    /// Why it failed; never holds an environment value or a token.
    pub error: Option<String>,
    pub failure_reason: Option<Value>,
}

/// `item/mcpToolCall/progress`: a running MCP tool call reported progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallProgressNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub message: String,
}

/// `mcpServerStatus/list` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusParams {
    /// The thread whose servers to list; without it, the configured servers, each with the
    /// state of a loaded thread's connection to it when there is one.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Only this server.
    #[serde(default)]
    pub server_name: Option<String>,
    /// Opaque cursor from a previous page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size (default 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// `full` or `toolsAndAuthOnly`; openturn always answers in full.
    #[serde(default)]
    pub detail: Option<String>,
}

/// `mcpServerStatus/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusResponse {
    pub data: Vec<McpServerStatus>,
    pub next_cursor: Option<String>,
}

/// One server in `mcpServerStatus/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    pub name: String,
    /// `notStarted`, `starting`, `connected` or `failed`.
    pub runtime_status: Option<String>,
    pub plugin_id: Option<String>,
    pub http_origin: Option<String>,
    /// The server's `serverInfo` from its handshake.
    pub server_info: Option<Value>,
    pub server_capabilities: Option<Value>,
    pub tool_list_meta: Option<Value>,
    /// The tools the model may call, by name, as the server listed them (with input schemas).
    pub tools: BTreeMap<String, Value>,
    /// Why no tools are known (start-up failed).
    pub tools_error: Option<String>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
    /// `unsupported` (stdio), `bearerToken`, `oAuth` (tokens of `mcpServer/oauth/login`) or
    /// `unknown`.
    pub auth_status: String,
}

/// `mcpServer/elicitation/request` params: the MCP elicitation as the server (or openturn, for
/// a tool-call approval, with `_meta.codex_approval_kind = "mcp_tool_call"`) asked it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerElicitationRequestParams {
    pub thread_id: String,
    /// The turn running when the question came, when there was one.
    pub turn_id: Option<String>,
    pub server_name: String,
    /// `form` or `url`.
    pub mode: String,
    pub message: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// The form's JSON Schema (`form` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// The page to open (`url` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

/// The client's answer to `mcpServer/elicitation/request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerElicitationRequestResponse {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(rename = "_meta", default)]
    pub meta: Option<Value>,
}

/// `mcpServer/tool/call` params: a client calls a tool of a server a loaded thread runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerToolCallParams {
    pub thread_id: String,
    pub server: String,
    #[serde(default)]
    pub environment_id: Option<String>,
    pub tool: String,
    /// The tool's arguments (an object); absent means none.
    #[serde(default)]
    pub arguments: Option<Value>,
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
}

/// `mcpServer/tool/call` result: the server's `CallToolResult`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerToolCallResponse {
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// `mcpServer/resource/read` params: one resource of a server a loaded thread runs (that
/// thread's, or the newest loaded thread's running `server` when `threadId` is absent).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceReadParams {
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
    #[serde(default)]
    pub thread_id: Option<String>,
    #[serde(default)]
    pub origin_call_id: Option<String>,
    pub server: String,
    #[serde(default)]
    pub environment_id: Option<String>,
    pub uri: String,
    #[serde(default)]
    pub connector_id: Option<String>,
    #[serde(default)]
    pub target: Option<Value>,
}

/// `mcpServer/resource/read` result: the server's `contents`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceReadResponse {
    pub contents: Vec<Value>,
    /// Always `null`: openturn scopes no resources by app.
    pub origin_call_id: Option<String>,
}
