//! `mcpServerStatus/list`: the MCP servers of a thread (or the configured ones), with their
//! runtime state, tools (with input schemas) and resources, paged and filtered by name.

use std::collections::BTreeMap;

use crate::core::ThreadId;
use crate::mcp::{McpServerConfig, McpServerSnapshot, McpTransportConfig, StartupState};
use crate::protocol::mcp::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpServerStatus,
};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// Servers per page when the client names no limit.
const DEFAULT_PAGE: usize = 100;

pub(crate) fn mcp_server_status_list(
    context: &ServerContext,
    params: ListMcpServerStatusParams,
) -> Result<ListMcpServerStatusResponse, HandlerError> {
    let (configs, snapshots) = match &params.thread_id {
        Some(thread_id) => {
            let thread = context.threads.get(&ThreadId::parse(thread_id)?)?;
            let snapshots = thread
                .mcp_servers()
                .map(|servers| servers.snapshots())
                .unwrap_or_default();
            (thread.settings().mcp_servers, snapshots)
        }
        None => (
            context.config.mcp_servers.clone(),
            loaded_snapshots(context),
        ),
    };
    let mut statuses: Vec<McpServerStatus> = configs
        .iter()
        .filter(|config| config.enabled)
        .filter(|config| {
            params
                .server_name
                .as_ref()
                .is_none_or(|name| *name == config.name)
        })
        .map(|config| {
            let snapshot = snapshots.iter().find(|s| s.name == config.name);
            status(config, snapshot)
        })
        .collect();
    statuses.sort_by(|a, b| a.name.cmp(&b.name));
    let start = match &params.cursor {
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            HandlerError::InvalidParams(format!(
                "`cursor`: `{cursor}` is not a cursor this server gave"
            ))
        })?,
        None => 0,
    };
    let limit = params
        .limit
        .map(|limit| limit.max(1) as usize)
        .unwrap_or(DEFAULT_PAGE);
    let end = start.saturating_add(limit).min(statuses.len());
    let next_cursor = (end < statuses.len()).then(|| end.to_string());
    let data = statuses.drain(start.min(end)..end).collect();
    Ok(ListMcpServerStatusResponse { data, next_cursor })
}

/// The newest loaded thread's view of each server, for a listing without a thread.
fn loaded_snapshots(context: &ServerContext) -> Vec<McpServerSnapshot> {
    let mut ids = context.threads.loaded_thread_ids();
    // Thread ids are UUIDv7: the greatest is the newest.
    ids.sort();
    let mut found: Vec<McpServerSnapshot> = Vec::new();
    for id in ids.iter().rev() {
        let Ok(thread) = context.threads.get(id) else {
            continue;
        };
        for snapshot in thread
            .mcp_servers()
            .map(|s| s.snapshots())
            .unwrap_or_default()
        {
            if !found.iter().any(|known| known.name == snapshot.name) {
                found.push(snapshot);
            }
        }
    }
    found
}

fn status(config: &McpServerConfig, snapshot: Option<&McpServerSnapshot>) -> McpServerStatus {
    let (runtime_status, tools_error) = match snapshot.map(|s| &s.state) {
        None => ("notStarted", None),
        Some(StartupState::Starting) => ("starting", None),
        Some(StartupState::Ready) => ("connected", None),
        Some(StartupState::Failed(reason)) => ("failed", Some(reason.clone())),
    };
    let (http_origin, auth_status) = match &config.transport {
        McpTransportConfig::Stdio { .. } => (None, "unsupported"),
        McpTransportConfig::Http {
            url,
            bearer_token_env_var,
            http_headers,
        } => (
            origin(url),
            if bearer_token_env_var.is_some()
                || http_headers
                    .keys()
                    .any(|h| h.eq_ignore_ascii_case("authorization"))
            {
                "bearerToken"
            } else {
                "unknown"
            },
        ),
    };
    let tools: BTreeMap<String, serde_json::Value> = snapshot
        .map(|s| {
            s.tools
                .iter()
                .map(|tool| (tool.name.clone(), tool.listing.clone()))
                .collect()
        })
        .unwrap_or_default();
    McpServerStatus {
        name: config.name.clone(),
        runtime_status: Some(runtime_status.to_string()),
        plugin_id: None,
        http_origin,
        server_info: snapshot.and_then(|s| s.server_info.clone()),
        server_capabilities: snapshot.and_then(|s| s.capabilities.clone()),
        tool_list_meta: None,
        tools,
        tools_error,
        resources: snapshot.map(|s| s.resources.clone()).unwrap_or_default(),
        resource_templates: snapshot
            .map(|s| s.resource_templates.clone())
            .unwrap_or_default(),
        auth_status: auth_status.to_string(),
    }
}

/// `scheme://host[:port]` of a URL: no credentials, path or query.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    Some(format!("{scheme}://{host}"))
}

#[cfg(test)]
mod tests {
    use super::origin;

    #[test]
    fn an_origin_drops_credentials_path_and_query() {
        assert_eq!(
            origin("https://user:pw@example.test:8443/mcp?x=1").as_deref(),
            Some("https://example.test:8443")
        );
        assert_eq!(origin("not a url"), None);
    }
}
