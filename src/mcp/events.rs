//! What the MCP connections of a thread report to its owner, in the order it happened.

use tokio::sync::oneshot;

use super::status::StartupState;

#[derive(Debug)]
pub enum McpEvent {
    /// A server's start-up moved on (starting → ready | failed), or a ready server died.
    Startup { server: String, state: StartupState },
    /// A server asks the user something (`elicitation/create`). The answer is the MCP
    /// `ElicitResult` as JSON; a dropped `reply` declines.
    Elicitation {
        server: String,
        params: serde_json::Value,
        reply: oneshot::Sender<serde_json::Value>,
    },
    /// A running tool call reported progress; `call_id` is the id the call was made under.
    Progress {
        server: String,
        call_id: String,
        message: String,
    },
}
