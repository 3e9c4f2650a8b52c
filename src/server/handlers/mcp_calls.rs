//! `config/mcpServer/reload`, `mcpServer/tool/call` and `mcpServer/resource/read`: MCP beyond
//! the model's own tool calls.
//!
//! A reload reads config.toml again and applies its `[mcp_servers]` to every loaded thread
//! (`Thread::reload_mcp_servers`): servers the thread took from the file follow the file, ones
//! its own request configured stay. The status of each (re)started server reaches the client as
//! `mcpServer/startupStatus/updated`, as at thread start. Calls and reads go to a server that a
//! loaded thread runs, bounded by the server's tool timeout.

use std::sync::Mutex;

use serde_json::{json, Value};

use crate::core::{Thread, ThreadId};
use crate::mcp::{McpCallError, McpServerConfig, McpServers};
use crate::protocol::mcp::{
    McpResourceReadParams, McpResourceReadResponse, McpServerToolCallParams,
    McpServerToolCallResponse,
};
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The `[mcp_servers]` of the file as the last reload (or start-up) read them: a thread's server
/// equal to one of these came from the file, and follows it on the next reload.
static FILE_SERVERS: Mutex<Option<Vec<McpServerConfig>>> = Mutex::new(None);

async fn mcp_server_reload(context: &ServerContext) -> Result<EmptyResponse, HandlerError> {
    let fresh = context.config.reloaded()?;
    let before = {
        let mut last = match FILE_SERVERS.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        last.replace(fresh.mcp_servers.clone())
            .unwrap_or_else(|| context.config.mcp_servers.clone())
    };
    let mut ids = context.threads.loaded_thread_ids();
    ids.sort();
    for id in ids {
        if let Ok(thread) = context.threads.get(&id) {
            thread.reload_mcp_servers(&before, &fresh.mcp_servers).await;
        }
    }
    Ok(EmptyResponse {})
}

fn call_error(error: McpCallError) -> HandlerError {
    HandlerError::InvalidRequest(error.to_string())
}

/// The servers of `thread_id`, which must be loaded and run `server`.
fn servers_of(
    context: &ServerContext,
    thread_id: &str,
    server: &str,
) -> Result<std::sync::Arc<McpServers>, HandlerError> {
    let thread = context.threads.get(&ThreadId::parse(thread_id)?)?;
    running(&thread, server).ok_or_else(|| {
        HandlerError::InvalidRequest(format!(
            "thread {thread_id} runs no MCP server named `{server}`"
        ))
    })
}

fn running(thread: &Thread, server: &str) -> Option<std::sync::Arc<McpServers>> {
    let servers = thread.mcp_servers()?;
    servers
        .snapshots()
        .iter()
        .any(|snapshot| snapshot.name == server)
        .then(|| servers.clone())
}

async fn mcp_server_tool_call(
    context: &ServerContext,
    params: McpServerToolCallParams,
) -> Result<McpServerToolCallResponse, HandlerError> {
    let servers = servers_of(context, &params.thread_id, &params.server)?;
    let arguments = params.arguments.unwrap_or_else(|| json!({}));
    if !arguments.is_object() {
        return Err(HandlerError::InvalidParams(
            "`arguments` must be an object".to_string(),
        ));
    }
    // Progress the server reports for this call belongs to no item of a turn.
    let call_id = format!("client-{}", uuid::Uuid::new_v4());
    let result = servers
        .call_tool(&params.server, &params.tool, arguments, &call_id)
        .await
        .map_err(call_error)?;
    Ok(McpServerToolCallResponse {
        content: result
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        structured_content: result.get("structuredContent").cloned(),
        is_error: result.get("isError").and_then(Value::as_bool),
        meta: result.get("_meta").cloned(),
    })
}

async fn mcp_resource_read(
    context: &ServerContext,
    params: McpResourceReadParams,
) -> Result<McpResourceReadResponse, HandlerError> {
    let servers = match &params.thread_id {
        Some(thread_id) => servers_of(context, thread_id, &params.server)?,
        None => newest_running(context, &params.server).ok_or_else(|| {
            HandlerError::InvalidRequest(format!(
                "no loaded thread runs an MCP server named `{}`",
                params.server
            ))
        })?,
    };
    let result = servers
        .read_resource(&params.server, &params.uri)
        .await
        .map_err(call_error)?;
    Ok(McpResourceReadResponse {
        contents: result
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        origin_call_id: None,
    })
}

/// The servers of the newest loaded thread that runs `server` (thread ids are UUIDv7: the
/// greatest is the newest).
fn newest_running(context: &ServerContext, server: &str) -> Option<std::sync::Arc<McpServers>> {
    let mut ids = context.threads.loaded_thread_ids();
    ids.sort();
    ids.iter()
        .rev()
        .filter_map(|id| context.threads.get(id).ok())
        .find_map(|thread| running(&thread, server))
}

handler!(McpServerReload, |context, _params| mcp_server_reload(
    context
)
.await);
handler!(McpServerToolCall, |context, params| mcp_server_tool_call(
    context, params
)
.await);
handler!(McpResourceRead, |context, params| mcp_resource_read(
    context, params
)
.await);
