//! Opening one MCP connection: spawn the child (through the supervisor, which knows it for an
//! MCP server) or reach the URL, shake hands, list what the server offers. Bounded by the
//! caller's start-up timeout; nothing here waits on its own.

use std::path::Path;

use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::config::{McpServerConfig, McpTransportConfig};
use super::events::McpEvent;
use super::handler::{OpenturnClient, ProgressRoutes};
use super::status::McpTool;
use crate::supervisor::{self, ServerProcess};

pub(crate) type Service = RunningService<RoleClient, OpenturnClient>;

/// A server that answered the handshake and listed its tools.
pub(crate) struct Connected {
    pub service: Service,
    /// The child (stdio servers), so the connection's end can make sure it is gone.
    pub process: Option<ServerProcess>,
    pub server_info: Option<Value>,
    pub capabilities: Option<Value>,
    pub tools: Vec<McpTool>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
}

/// Connects and lists. The error is for the user: it names the server's problem, never an
/// environment value or a token.
pub(crate) async fn connect(
    config: &McpServerConfig,
    thread_cwd: &Path,
    events_tx: mpsc::Sender<McpEvent>,
    progress_routes: ProgressRoutes,
) -> Result<Connected, String> {
    let client = OpenturnClient {
        server: config.name.clone(),
        events_tx,
        progress_routes,
    };
    let (service, process) = match &config.transport {
        McpTransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut child = tokio::process::Command::new(command);
            child
                .args(args)
                .envs(env)
                .current_dir(cwd.as_deref().unwrap_or(thread_cwd));
            // Dropped on any early return below, the process kills the server.
            let mut process = supervisor::spawn_server(&config.name, &mut child)
                .map_err(|error| format!("could not start `{command}`: {error}"))?;
            let stdio = process
                .take_stdio()
                .ok_or_else(|| format!("could not start `{command}`: no pipes to it"))?;
            let service = client
                .serve(stdio)
                .await
                .map_err(|error| format!("handshake with the server failed: {error}"))?;
            (service, Some(process))
        }
        McpTransportConfig::Http {
            url,
            bearer_token_env_var,
            http_headers,
        } => {
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(headers(http_headers)?);
            if let Some(variable) = bearer_token_env_var {
                let token = std::env::var(variable)
                    .map_err(|_| format!("the bearer token variable `{variable}` is not set"))?;
                transport_config = transport_config.auth_header(token);
            } else if let Some(token) = oauth_bearer(config, url, http_headers).await? {
                transport_config = transport_config.auth_header(token);
            }
            // reqwest's rustls needs a process-wide crypto provider; ring is already built in
            // for the provider client. A second install attempt is harmless.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let transport = StreamableHttpClientTransport::from_config(transport_config);
            let service = client
                .serve(transport)
                .await
                .map_err(|error| format!("handshake with {url} failed: {error}"))?;
            (service, None)
        }
    };
    let listed = list_offers(config, &service).await;
    match listed {
        Ok(offers) => Ok(Connected {
            process,
            server_info: offers.server_info,
            capabilities: offers.capabilities,
            tools: offers.tools,
            resources: offers.resources,
            resource_templates: offers.resource_templates,
            service,
        }),
        Err(error) => {
            let _ = service.cancel().await;
            Err(error)
        }
    }
}

/// The token of an `mcpServer/oauth/login`, refreshed when expired, for a server whose
/// configuration gives no `Authorization` of its own.
async fn oauth_bearer(
    config: &McpServerConfig,
    url: &str,
    http_headers: &std::collections::BTreeMap<String, String>,
) -> Result<Option<String>, String> {
    let own_authorization = http_headers
        .keys()
        .any(|name| name.eq_ignore_ascii_case("authorization"));
    let Some(store) = config.oauth_store.as_deref().filter(|_| !own_authorization) else {
        return Ok(None);
    };
    super::oauth::bearer_token(store, &config.name, url)
        .await
        .map_err(|error| format!("the OAuth login is no longer usable: {error}"))
}

/// `http_headers` as header values; an error names the header, never its value.
fn headers(
    table: &std::collections::BTreeMap<String, String>,
) -> Result<std::collections::HashMap<http::HeaderName, http::HeaderValue>, String> {
    table
        .iter()
        .map(|(name, value)| {
            let header = http::HeaderName::try_from(name.as_str())
                .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
            let mut value = http::HeaderValue::try_from(value.as_str())
                .map_err(|_| format!("the value of header `{name}` is not a valid header value"))?;
            value.set_sensitive(true);
            Ok((header, value))
        })
        .collect()
}

struct Offers {
    server_info: Option<Value>,
    capabilities: Option<Value>,
    tools: Vec<McpTool>,
    resources: Vec<Value>,
    resource_templates: Vec<Value>,
}

async fn list_offers(config: &McpServerConfig, service: &Service) -> Result<Offers, String> {
    let peer_info = service
        .peer_info()
        .and_then(|info| serde_json::to_value(info.as_ref()).ok());
    let field = |name: &str| peer_info.as_ref().and_then(|info| info.get(name)).cloned();
    let capabilities = field("capabilities");
    let server_info = field("serverInfo");
    let listed = service
        .list_all_tools()
        .await
        .map_err(|error| format!("listing the server's tools failed: {error}"))?;
    let mut tools: Vec<McpTool> = listed
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .filter_map(tool_from_listing)
        .filter(|tool| config.allows_tool(&tool.name))
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let offers_resources = capabilities
        .as_ref()
        .is_some_and(|caps| caps.get("resources").is_some());
    let (resources, resource_templates) = if offers_resources {
        // A server may claim resources and still fail to list them; its tools stay usable.
        let resources = service.list_all_resources().await.unwrap_or_default();
        let templates = service
            .list_all_resource_templates()
            .await
            .unwrap_or_default();
        (
            resources
                .iter()
                .filter_map(|r| serde_json::to_value(r).ok())
                .collect(),
            templates
                .iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(Offers {
        server_info,
        capabilities,
        tools,
        resources,
        resource_templates,
    })
}

fn tool_from_listing(listing: Value) -> Option<McpTool> {
    let name = listing.get("name")?.as_str()?.to_string();
    let description = listing
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string);
    let input_schema = listing
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
    let read_only = listing
        .pointer("/annotations/readOnlyHint")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Some(McpTool {
        name,
        description,
        input_schema,
        listing,
        read_only,
    })
}
