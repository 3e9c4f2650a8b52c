//! `mcpServerStatus/list`: the MCP servers of a thread (or the configured ones), with their
//! runtime state, tools (with input schemas) and resources, paged and filtered by name.
//!
//! Without a thread, a server some loaded thread runs is shown as that thread sees it; any other
//! is probed (started, listed and stopped again, [`crate::mcp::probe_servers`]) so the listing
//! shows its tools, `serverInfo`, or why it failed to start, with no runtime state. Editors draw
//! their MCP settings this way before any thread exists.

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

/// Where a listed server's state came from.
enum Seen {
    /// A thread runs it: the state is that thread's.
    Running(McpServerSnapshot),
    /// Started for this listing and stopped again: what it offered, no runtime state.
    Probed(McpServerSnapshot),
    /// The thread asked about has not started it.
    NotStarted,
}

pub(crate) async fn mcp_server_status_list(
    context: &ServerContext,
    params: ListMcpServerStatusParams,
) -> Result<ListMcpServerStatusResponse, HandlerError> {
    let (configs, running) = match &params.thread_id {
        Some(thread_id) => {
            let thread = context.threads.get(&ThreadId::parse(thread_id)?)?;
            let snapshots = thread
                .mcp_servers()
                .map(|servers| servers.snapshots())
                .unwrap_or_default();
            (thread.settings().mcp_servers, snapshots)
        }
        // The file as it is now: a server added since start-up is listed (and probed).
        None => (
            context.config.reloaded()?.mcp_servers,
            loaded_snapshots(context),
        ),
    };
    let mut listed: Vec<McpServerConfig> = configs
        .into_iter()
        .filter(|config| config.enabled)
        .filter(|config| {
            params
                .server_name
                .as_ref()
                .is_none_or(|name| *name == config.name)
        })
        .collect();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
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
    let end = start.saturating_add(limit).min(listed.len());
    let next_cursor = (end < listed.len()).then(|| end.to_string());
    // Only the page's servers are looked at: a probe starts processes.
    let page: Vec<McpServerConfig> = listed.drain(start.min(end)..end).collect();
    let seen = seen_servers(context, &page, running, params.thread_id.is_none()).await;
    let data = page
        .iter()
        .zip(seen)
        .map(|(config, seen)| status(config, &seen))
        .collect();
    Ok(ListMcpServerStatusResponse { data, next_cursor })
}

/// What is known of each server of `page`, in its order: a running thread's view, else (when
/// `probe` allows, i.e. no thread was named) a probe's.
async fn seen_servers(
    context: &ServerContext,
    page: &[McpServerConfig],
    mut running: Vec<McpServerSnapshot>,
    probe: bool,
) -> Vec<Seen> {
    let unseen: Vec<McpServerConfig> = page
        .iter()
        .filter(|config| probe && !running.iter().any(|s| s.name == config.name))
        .cloned()
        .collect();
    let mut probed = if unseen.is_empty() {
        Vec::new()
    } else {
        let cwd = std::env::current_dir().unwrap_or_else(|_| context.config.home.clone());
        crate::mcp::probe_servers(&unseen, &cwd, &context.lifecycle.handlers_stop).await
    };
    page.iter()
        .map(|config| {
            let take = |snapshots: &mut Vec<McpServerSnapshot>| {
                let index = snapshots.iter().position(|s| s.name == config.name)?;
                Some(snapshots.swap_remove(index))
            };
            match (take(&mut running), take(&mut probed)) {
                (Some(snapshot), _) => Seen::Running(snapshot),
                (None, Some(snapshot)) => Seen::Probed(snapshot),
                (None, None) => Seen::NotStarted,
            }
        })
        .collect()
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

fn status(config: &McpServerConfig, seen: &Seen) -> McpServerStatus {
    let (snapshot, runtime) = match seen {
        Seen::Running(snapshot) => (Some(snapshot), true),
        Seen::Probed(snapshot) => (Some(snapshot), false),
        Seen::NotStarted => (None, true),
    };
    let (runtime_status, tools_error) = match snapshot.map(|s| &s.state) {
        None => ("notStarted", None),
        Some(StartupState::Starting) => ("starting", None),
        Some(StartupState::Ready) => ("connected", None),
        Some(StartupState::Failed(reason)) => ("failed", Some(reason.clone())),
    };
    // A probed server ran for this answer only: it has no runtime state to report.
    let runtime_status = runtime.then(|| runtime_status.to_string());
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
            } else if config
                .oauth_store
                .as_deref()
                .is_some_and(|store| crate::mcp::oauth::has_tokens(store, &config.name, url))
            {
                "oAuth"
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
        runtime_status,
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

handler!(McpServerStatusList, |context, params| {
    mcp_server_status_list(context, params).await
});

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
