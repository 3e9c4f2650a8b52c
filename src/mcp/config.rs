//! What one configured MCP server is: how to reach it, how long to wait for it, which of its
//! tools the model may see. Read from `[mcp_servers.NAME]` tables (config.toml, `-c` flags, a
//! `thread/start` `config` object) after the checker has vetted each value's kind.
//!
//! Environment values and the bearer token are secrets: [`McpServerConfig`]'s `Debug` shows
//! neither, and no error built here quotes them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use toml::{Table, Value};

/// How long a server may take to start (spawn, handshake, list its tools) by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may run by default.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// How a server is reached.
#[derive(Clone, PartialEq)]
pub enum McpTransportConfig {
    /// A child process speaking JSON-RPC lines on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set in the child's environment on top of the daemon's own.
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        /// The environment variable holding the bearer token, read when connecting.
        bearer_token_env_var: Option<String>,
        /// Sent with every request (an editor passes its own `Authorization` this way).
        http_headers: BTreeMap<String, String>,
    },
}

/// One `[mcp_servers.NAME]` table.
#[derive(Clone, PartialEq)]
pub struct McpServerConfig {
    pub name: String,
    pub transport: McpTransportConfig,
    pub enabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// When set, only these tools are offered.
    pub enabled_tools: Option<Vec<String>>,
    /// Never offered, even when listed in `enabled_tools`.
    pub disabled_tools: Vec<String>,
    /// Where OAuth tokens from `mcpServer/oauth/login` are kept (the home's), for an HTTP
    /// server without a bearer of its own; set by the configuration loader.
    pub oauth_store: Option<PathBuf>,
}

impl McpServerConfig {
    /// Whether the model may see (and call) the server's tool `name`.
    pub fn allows_tool(&self, name: &str) -> bool {
        let enabled = self
            .enabled_tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|tool| tool == name));
        enabled && !self.disabled_tools.iter().any(|tool| tool == name)
    }
}

impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let transport = match &self.transport {
            McpTransportConfig::Stdio { command, env, .. } => {
                // Names of the variables only: their values may be credentials.
                format!(
                    "stdio `{command}` (env: {:?})",
                    env.keys().collect::<Vec<_>>()
                )
            }
            McpTransportConfig::Http {
                url, http_headers, ..
            } => format!(
                "http {url} (headers: {:?})",
                http_headers.keys().collect::<Vec<_>>()
            ),
        };
        f.debug_struct("McpServerConfig")
            .field("name", &self.name)
            .field("transport", &transport)
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

/// Reads every `[mcp_servers.NAME]` of a merged configuration table, in name order. An error
/// names the server and the key at fault.
pub fn servers_from_table(table: &Table) -> Result<Vec<McpServerConfig>, String> {
    let Some(servers) = table.get("mcp_servers") else {
        return Ok(Vec::new());
    };
    let Some(servers) = servers.as_table() else {
        return Err("`mcp_servers` must be a table of servers".to_string());
    };
    servers
        .iter()
        .map(|(name, server)| match server.as_table() {
            Some(server) => server_from_table(name, server),
            None => Err(format!("`mcp_servers.{name}` must be a table")),
        })
        .collect()
}

fn server_from_table(name: &str, table: &Table) -> Result<McpServerConfig, String> {
    check_name(name)?;
    let key = |key: &str| format!("`mcp_servers.{name}.{key}`");
    let text = |field: &str| -> Result<Option<String>, String> {
        match table.get(field) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("{} must be a string", key(field))),
        }
    };
    let list = |field: &str| -> Result<Option<Vec<String>>, String> {
        match table.get(field) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| format!("{} must be an array of strings", key(field))),
            Some(_) => Err(format!("{} must be an array of strings", key(field))),
        }
    };
    let seconds = |field: &str, default: Duration| -> Result<Duration, String> {
        let value = match table.get(field) {
            None => return Ok(default),
            Some(Value::Integer(n)) if *n >= 0 => *n as f64,
            Some(Value::Float(x)) if x.is_finite() && *x >= 0.0 => *x,
            Some(_) => {
                return Err(format!(
                    "{} must be a number of seconds, 0 or more",
                    key(field)
                ))
            }
        };
        Duration::try_from_secs_f64(value).map_err(|_| format!("{} is too large", key(field)))
    };
    let transport = match (text("command")?, text("url")?) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "`mcp_servers.{name}` sets both `command` and `url`; give `command` for a stdio \
                 server or `url` for a streamable HTTP one"
            ))
        }
        (Some(command), None) => McpTransportConfig::Stdio {
            command,
            args: list("args")?.unwrap_or_default(),
            env: string_table(name, "env", table.get("env"))?,
            cwd: text("cwd")?.map(PathBuf::from),
        },
        (None, Some(url)) => McpTransportConfig::Http {
            url,
            bearer_token_env_var: text("bearer_token_env_var")?,
            http_headers: string_table(name, "http_headers", table.get("http_headers"))?,
        },
        (None, None) => {
            return Err(format!(
                "`mcp_servers.{name}` needs `command` (a stdio server) or `url` (a streamable \
                 HTTP server)"
            ))
        }
    };
    let enabled = match table.get("enabled") {
        None => true,
        Some(Value::Boolean(enabled)) => *enabled,
        Some(_) => return Err(format!("{} must be true or false", key("enabled"))),
    };
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        enabled,
        startup_timeout: seconds("startup_timeout_sec", DEFAULT_STARTUP_TIMEOUT)?,
        tool_timeout: seconds("tool_timeout_sec", DEFAULT_TOOL_TIMEOUT)?,
        enabled_tools: list("enabled_tools")?,
        disabled_tools: list("disabled_tools")?.unwrap_or_default(),
        oauth_store: None,
    })
}

/// Server names become part of tool namespaces (`mcp__NAME`), which providers restrict to
/// letters, digits, `_` and `-`.
fn check_name(name: &str) -> Result<(), String> {
    let fits = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if fits {
        Ok(())
    } else {
        Err(format!(
            "MCP server name `{name}` may hold only letters, digits, `_` and `-`"
        ))
    }
}

/// `env` or `http_headers`: names to string values, which may be credentials and are never quoted.
fn string_table(
    name: &str,
    key: &str,
    value: Option<&Value>,
) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let Some(table) = value.as_table() else {
        return Err(format!(
            "`mcp_servers.{name}.{key}` must be a table of strings"
        ));
    };
    table
        .iter()
        .map(|(variable, value)| match value.as_str() {
            Some(text) => Ok((variable.clone(), text.to_string())),
            // The value is not quoted: it may be a credential.
            None => Err(format!(
                "`mcp_servers.{name}.{key}.{variable}` must be a string"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers(text: &str) -> Result<Vec<McpServerConfig>, String> {
        servers_from_table(&text.parse::<Table>().unwrap())
    }

    #[test]
    fn stdio_and_http_servers_read_with_their_defaults() {
        let read = servers(
            r#"
            [mcp_servers.docs]
            command = "docs-server"
            args = ["--stdio"]
            env = { TOKEN = "s3cret" }
            tool_timeout_sec = 2.5
            disabled_tools = ["delete"]
            [mcp_servers.web]
            url = "http://127.0.0.1:9/mcp"
            bearer_token_env_var = "WEB_TOKEN"
            enabled = false
            "#,
        )
        .unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].name, "docs");
        assert_eq!(read[0].tool_timeout, Duration::from_millis(2500));
        assert_eq!(read[0].startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert!(read[0].allows_tool("search") && !read[0].allows_tool("delete"));
        assert!(!read[1].enabled);
        let shown = format!("{:?}", read[0]);
        assert!(
            !shown.contains("s3cret") && shown.contains("TOKEN"),
            "{shown}"
        );
    }

    #[test]
    fn a_server_without_a_transport_or_with_two_is_an_error_naming_it() {
        let none = servers("[mcp_servers.x]\nargs = []")
            .err()
            .unwrap_or_default();
        assert!(none.contains("`mcp_servers.x` needs `command`"), "{none}");
        let both = servers("[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h\"")
            .err()
            .unwrap_or_default();
        assert!(both.contains("both"), "{both}");
        let bad_env = servers("[mcp_servers.x]\ncommand = \"a\"\nenv = { K = 5 }")
            .err()
            .unwrap_or_default();
        assert!(
            bad_env.contains("`mcp_servers.x.env.K`") && !bad_env.contains('5'),
            "{bad_env}"
        );
        let bad_name = servers("[mcp_servers.\"a b\"]\ncommand = \"a\"")
            .err()
            .unwrap_or_default();
        assert!(bad_name.contains("`a b`"), "{bad_name}");
    }

    #[test]
    fn enabled_tools_limit_and_disabled_tools_win() {
        let read = servers(
            "[mcp_servers.x]\ncommand = \"a\"\nenabled_tools = [\"a\", \"b\"]\ndisabled_tools = [\"b\"]",
        )
        .unwrap();
        assert!(read[0].allows_tool("a"));
        assert!(!read[0].allows_tool("b"));
        assert!(!read[0].allows_tool("c"));
    }
}
