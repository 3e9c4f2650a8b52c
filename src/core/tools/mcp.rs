//! MCP tools as the model sees them: one namespace per ready server (`mcp__NAME`) holding the
//! server's tools as functions with their own input schemas, plus three resource helpers
//! (`list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`) whenever servers
//! are configured. A call becomes an `mcpToolCall` item, asks first when the policy wants it,
//! runs within the server's tool timeout, and answers the model under the same call id.

use std::time::Instant;

use serde_json::{json, Value};

use crate::mcp::{McpServers, McpTool};

use super::super::approval::{ClientReply, ClientRequestKind};
use super::super::ids::ItemId;
use super::super::items::{ToolItemStatus, TurnItem};
use super::super::settings::{ApprovalPolicy, ThreadSettings};
use super::handle::TurnHandle;
use super::output::ToolOutput;

/// The namespace of a server's tools.
const NAMESPACE_PREFIX: &str = "mcp__";
const LIST_RESOURCES: &str = "list_mcp_resources";
const LIST_TEMPLATES: &str = "list_mcp_resource_templates";
const READ_RESOURCE: &str = "read_mcp_resource";
/// The `server` of a helper item that spans every server.
const ALL_SERVERS: &str = "openturn";

/// What an MCP call asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum McpTarget {
    Tool { server: String, tool: String },
    ListResources,
    ListTemplates,
    ReadResource,
}

/// A routed MCP call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McpCall {
    pub call_id: ItemId,
    pub target: McpTarget,
    pub arguments: Value,
}

/// The namespaces and helpers offered while `servers` exist (ready servers' tools only). With
/// `deferred`, the servers' tools are left out: the model finds them with `tool_search`.
pub(crate) fn specs(servers: &McpServers, deferred: bool) -> Vec<Value> {
    if servers.is_empty() {
        return Vec::new();
    }
    let mut specs = resource_helper_specs();
    if deferred {
        return specs;
    }
    for (server, tools) in servers.ready_tools() {
        if tools.is_empty() {
            continue;
        }
        specs.push(namespace_spec(
            &server,
            tools.iter().map(function_spec).collect(),
        ));
    }
    specs
}

/// The namespace holding `server`'s tools, as offered and as `tool_search` returns it.
pub(crate) fn namespace_spec(server: &str, tools: Vec<Value>) -> Value {
    json!({
        "type": "namespace",
        "name": format!("{NAMESPACE_PREFIX}{server}"),
        "description": format!("Tools of the `{server}` MCP server."),
        "tools": tools,
    })
}

fn function_spec(tool: &McpTool) -> Value {
    json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description.clone().unwrap_or_default(),
        "strict": false,
        "parameters": tool.input_schema,
    })
}

/// A tool as `tool_search` returns it: marked as loaded on demand, which the provider needs to
/// accept a function that was not in the request's `tools`.
pub(crate) fn deferred_function_spec(tool: &McpTool) -> Value {
    let mut spec = function_spec(tool);
    spec["defer_loading"] = Value::Bool(true);
    spec
}

fn resource_helper_specs() -> Vec<Value> {
    let server = |what: &str| json!({"type": "string", "description": format!("MCP server name; omit to list {what} of every server.")});
    let cursor = json!({"type": "string", "description": "Cursor from a previous call; omit for the first page."});
    vec![
        json!({
            "type": "function",
            "name": LIST_RESOURCES,
            "description": "List the resources MCP servers offer: files, records or other data a server can share as context. Prefer them over searching elsewhere when they fit.",
            "strict": false,
            "parameters": {"type": "object", "properties": {"server": server("the resources"), "cursor": cursor}, "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": LIST_TEMPLATES,
            "description": "List the resource templates MCP servers offer: parameterised URIs that name resources to read.",
            "strict": false,
            "parameters": {"type": "object", "properties": {"server": server("the templates"), "cursor": cursor}, "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": READ_RESOURCE,
            "description": "Read one resource from an MCP server, given the server's name and the resource's URI.",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The server's name, as list_mcp_resources gives it."},
                    "uri": {"type": "string", "description": "The resource's URI, as list_mcp_resources gives it."},
                },
                "required": ["server", "uri"],
                "additionalProperties": false,
            },
        }),
    ]
}

/// An MCP call, when the function names one: a tool in a configured server's namespace (or in
/// the flat `mcp__SERVER__TOOL` form), or a resource helper while servers are configured.
/// `Err` is the refusal the model reads.
pub(crate) fn route(
    call_id: &str,
    name: &str,
    namespace: Option<&str>,
    arguments: &str,
    settings: &ThreadSettings,
) -> Option<Result<McpCall, String>> {
    if settings.mcp_servers.is_empty() {
        return None;
    }
    let configured = |server: &str| settings.mcp_servers.iter().any(|s| s.name == server);
    let target = match namespace.and_then(|ns| ns.strip_prefix(NAMESPACE_PREFIX)) {
        Some(server) if configured(server) => McpTarget::Tool {
            server: server.to_string(),
            tool: name.to_string(),
        },
        Some(_) => return None,
        None => match name {
            LIST_RESOURCES => McpTarget::ListResources,
            LIST_TEMPLATES => McpTarget::ListTemplates,
            READ_RESOURCE => McpTarget::ReadResource,
            _ => {
                let (server, tool) = name.strip_prefix(NAMESPACE_PREFIX)?.split_once("__")?;
                if !configured(server) {
                    return None;
                }
                McpTarget::Tool {
                    server: server.to_string(),
                    tool: tool.to_string(),
                }
            }
        },
    };
    let arguments = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) => return Some(Err("function arguments must be a JSON object".to_string())),
            Err(error) => return Some(Err(format!("failed to parse function arguments: {error}"))),
        }
    };
    Some(Ok(McpCall {
        call_id: ItemId::from(call_id),
        target,
        arguments,
    }))
}

/// Runs the call to its output. `None` when the turn was cancelled first.
pub(crate) async fn run(turn: &TurnHandle, call: McpCall) -> Option<ToolOutput> {
    let clock = Instant::now();
    let (server, tool) = item_names(&call);
    let item =
        |status, result: Option<Value>, error: Option<String>, duration_ms| TurnItem::McpToolCall {
            id: call.call_id.clone(),
            server: server.clone(),
            tool: tool.clone(),
            arguments: call.arguments.clone(),
            status,
            result,
            error,
            duration_ms,
        };
    turn.item_started(item(ToolItemStatus::InProgress, None, None, None))
        .await;
    let outcome = tokio::select! {
        _ = turn.cancel.cancelled() => return None,
        outcome = call_server(turn, &call) => outcome,
    };
    let duration_ms = Some(i64::try_from(clock.elapsed().as_millis()).unwrap_or(i64::MAX));
    let (completed, text) = match outcome {
        Ok(Answer::Tool(result)) => {
            let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
            let status = if failed {
                ToolItemStatus::Failed
            } else {
                ToolItemStatus::Completed
            };
            let text = tool_result_text(&result, clock.elapsed().as_secs_f64());
            (item(status, Some(result), None, duration_ms), text)
        }
        Ok(Answer::Helper(value)) => {
            let text = value.to_string();
            let result = json!({"content": [{"type": "text", "text": text}]});
            (
                item(ToolItemStatus::Completed, Some(result), None, duration_ms),
                text,
            )
        }
        Err(message) => (
            item(
                ToolItemStatus::Failed,
                None,
                Some(message.clone()),
                duration_ms,
            ),
            message,
        ),
    };
    turn.item_completed(completed).await;
    Some(ToolOutput {
        call_id: call.call_id,
        custom: false,
        text,
    })
}

enum Answer {
    /// A server tool's `CallToolResult`.
    Tool(Value),
    /// A resource helper's JSON answer.
    Helper(Value),
}

/// The item's `server` and `tool`: the named server (or all of them) for a helper.
fn item_names(call: &McpCall) -> (String, String) {
    let named_server = || {
        call.arguments
            .get("server")
            .and_then(Value::as_str)
            .unwrap_or(ALL_SERVERS)
            .to_string()
    };
    match &call.target {
        McpTarget::Tool { server, tool } => (server.clone(), tool.clone()),
        McpTarget::ListResources => (named_server(), LIST_RESOURCES.to_string()),
        McpTarget::ListTemplates => (named_server(), LIST_TEMPLATES.to_string()),
        McpTarget::ReadResource => (named_server(), READ_RESOURCE.to_string()),
    }
}

async fn call_server(turn: &TurnHandle, call: &McpCall) -> Result<Answer, String> {
    let Some(servers) = turn.env.mcp_servers() else {
        return Err("no MCP server is running for this thread".to_string());
    };
    let text = |key: &str| call.arguments.get(key).and_then(Value::as_str);
    match &call.target {
        McpTarget::Tool { server, tool } => {
            let Some(listed) = servers.tool(server, tool) else {
                return Err(match servers.tool_names(server) {
                    Some(_) => format!("MCP server `{server}` offers no tool `{tool}`"),
                    None => format!("MCP server `{server}` is not available"),
                });
            };
            if !approved(turn, server, &listed, &call.arguments).await {
                return Err(format!(
                    "the user declined the call of `{tool}` on MCP server `{server}`"
                ));
            }
            servers
                .call_tool(server, tool, call.arguments.clone(), call.call_id.as_str())
                .await
                .map(Answer::Tool)
                .map_err(|error| error.to_string())
        }
        McpTarget::ListResources | McpTarget::ListTemplates => {
            let templates = call.target == McpTarget::ListTemplates;
            let listed = servers
                .list_resources(text("server"), templates)
                .await
                .map_err(|error| error.to_string())?;
            let key = if templates {
                "resourceTemplates"
            } else {
                "resources"
            };
            Ok(Answer::Helper(json!({ key: listed })))
        }
        McpTarget::ReadResource => {
            let (Some(server), Some(uri)) = (text("server"), text("uri")) else {
                return Err("read_mcp_resource needs `server` and `uri`".to_string());
            };
            let read = servers
                .read_resource(server, uri)
                .await
                .map_err(|error| error.to_string())?;
            let mut answer = json!({"server": server, "uri": uri});
            if let Some(contents) = read.get("contents") {
                answer["contents"] = contents.clone();
            }
            Ok(Answer::Helper(answer))
        }
    }
}

/// Whether the tool may run: without asking under `never` or for a tool the server marked
/// read-only; otherwise the user is asked through an elicitation request.
async fn approved(turn: &TurnHandle, server: &str, tool: &McpTool, arguments: &Value) -> bool {
    if tool.read_only || turn.env.settings().approval_policy == ApprovalPolicy::Never {
        return true;
    }
    let params = json!({
        "mode": "form",
        "message": format!("Allow the {server} MCP server to run tool \"{}\"?", tool.name),
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {
            "codex_approval_kind": "mcp_tool_call",
            "tool_name": tool.name,
            "tool_description": tool.description,
            "tool_params": arguments,
        },
    });
    let reply = turn
        .ask(ClientRequestKind::McpElicitation {
            server: server.to_string(),
            params,
        })
        .await;
    matches!(reply, ClientReply::Elicitation(answer)
        if answer.get("action").and_then(Value::as_str) == Some("accept"))
}

/// What the model reads for a tool result: the wall time, then the structured content when the
/// server gave it, else the content blocks' text (other blocks named by their type).
fn tool_result_text(result: &Value, seconds: f64) -> String {
    let body = match result.get("structuredContent") {
        Some(structured) if !structured.is_null() => structured.to_string(),
        _ => result
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| {
                blocks
                    .iter()
                    .map(|block| match block.get("text").and_then(Value::as_str) {
                        Some(text) => text.to_string(),
                        None => format!(
                            "[{} content]",
                            block
                                .get("type")
                                .and_then(Value::as_str)
                                .unwrap_or("unknown")
                        ),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
    };
    format!("Wall time: {seconds:.4} seconds\nOutput:\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::servers_from_table;

    fn settings() -> ThreadSettings {
        let table = "[mcp_servers.docs]\ncommand = \"x\"".parse().unwrap();
        ThreadSettings {
            mcp_servers: servers_from_table(&table).unwrap(),
            ..ThreadSettings::for_tests()
        }
    }

    #[test]
    fn namespaced_flat_and_helper_calls_route_to_mcp_and_others_do_not() {
        let settings = settings();
        let routed = |name: &str, namespace: Option<&str>| {
            route("c", name, namespace, "{}", &settings).map(|r| r.map(|call| call.target))
        };
        let tool = McpTarget::Tool {
            server: "docs".into(),
            tool: "search".into(),
        };
        assert_eq!(routed("search", Some("mcp__docs")), Some(Ok(tool.clone())));
        assert_eq!(routed("mcp__docs__search", None), Some(Ok(tool)));
        assert_eq!(
            routed("read_mcp_resource", None),
            Some(Ok(McpTarget::ReadResource))
        );
        assert_eq!(routed("search", Some("mcp__other")), None);
        assert_eq!(routed("exec_command", None), None);
        assert!(matches!(
            route("c", "search", Some("mcp__docs"), "[1]", &settings),
            Some(Err(_))
        ));
        // Without servers the helpers are not offered, so not routed either.
        let plain = ThreadSettings::for_tests();
        assert_eq!(route("c", "list_mcp_resources", None, "{}", &plain), None);
    }

    #[test]
    fn structured_content_wins_over_text_blocks() {
        let result =
            json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"a": 1}});
        assert!(tool_result_text(&result, 0.5).ends_with("Output:\n{\"a\":1}"));
        let text_only =
            json!({"content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "x"}]});
        assert!(tool_result_text(&text_only, 0.5).ends_with("Output:\nhi\n[image content]"));
    }
}
