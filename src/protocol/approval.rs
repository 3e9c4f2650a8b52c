//! Server → client requests (approvals, client-tool calls) and their replies.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::jsonrpc::RequestId;

/// A server → client request, tagged by method name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method", content = "params")]
pub enum ServerRequest {
    #[serde(rename = "item/commandExecution/requestApproval")]
    CommandExecutionRequestApproval(CommandExecutionRequestApprovalParams),
    #[serde(rename = "item/fileChange/requestApproval")]
    FileChangeRequestApproval(FileChangeRequestApprovalParams),
    #[serde(rename = "item/tool/call")]
    DynamicToolCall(DynamicToolCallParams),
    #[serde(rename = "item/tool/requestUserInput")]
    ToolRequestUserInput(ToolRequestUserInputParams),
    #[serde(rename = "mcpServer/elicitation/request")]
    McpServerElicitationRequest(super::mcp::McpServerElicitationRequestParams),
}

/// `item/commandExecution/requestApproval` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    /// `command`.
    pub kind: String,
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub started_at_ms: i64,
    pub environment_id: String,
    pub reason: Option<String>,
    pub command: String,
    pub cwd: String,
    pub command_actions: Vec<Value>,
    pub available_decisions: Vec<Value>,
}

/// The reply to a command approval: `{"decision": "accept" | "acceptForSession" | "decline" |
/// "cancel" | {"acceptWithExecpolicyAmendment": …} | …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandExecutionRequestApprovalResponse {
    pub decision: Value,
}

/// `item/fileChange/requestApproval` params: may the `fileChange` item `itemId` (already
/// started; a streamed patch's files were shown by `item/fileChange/patchUpdated`) be applied?
/// Answered like a command approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    /// When the question was put to the client (Unix milliseconds).
    pub started_at_ms: i64,
    pub reason: Option<String>,
    /// A root the client could grant writes under for the rest of the session (unused: null).
    pub grant_root: Option<String>,
}

/// `item/tool/call` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallParams {
    pub thread_id: String,
    pub turn_id: String,
    pub call_id: String,
    pub namespace: Option<String>,
    pub tool: String,
    pub arguments: Value,
}

/// The reply to `item/tool/call`; both fields required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallResponse {
    pub content_items: Vec<DynamicToolCallOutputContentItem>,
    pub success: bool,
}

/// One piece of a client tool's result: text, or an image by URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolCallOutputContentItem {
    InputText {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    InputImage {
        image_url: String,
    },
}

/// `item/tool/requestUserInput` params: questions the model asks the user through
/// `request_user_input`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputParams {
    pub thread_id: String,
    pub turn_id: String,
    /// The tool call's id.
    pub item_id: String,
    /// The turn waits for the answer.
    pub is_blocking: bool,
    pub questions: Vec<ToolRequestUserInputQuestion>,
}

/// One question of a [`ToolRequestUserInputParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputQuestion {
    /// The id answers are keyed by.
    pub id: String,
    pub header: String,
    pub question: String,
    /// The client may offer a free-form answer besides the options.
    #[serde(default)]
    pub is_other: bool,
    #[serde(default)]
    pub is_secret: bool,
    pub options: Option<Vec<ToolRequestUserInputOption>>,
}

/// One choice offered for a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRequestUserInputOption {
    pub label: String,
    pub description: String,
}

/// The reply to `item/tool/requestUserInput`: answers by question id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRequestUserInputResponse {
    pub answers: std::collections::BTreeMap<String, ToolRequestUserInputAnswer>,
}

/// The user's answer to one question (the chosen labels and/or free text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRequestUserInputAnswer {
    pub answers: Vec<String>,
}

/// `serverRequest/resolved` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    pub thread_id: String,
    pub request_id: RequestId,
}
