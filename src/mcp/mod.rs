//! MCP client: the Model Context Protocol servers a thread's model may use, on the protocol's
//! official Rust SDK (`rmcp`). This layer knows MCP and processes, not threads, turns or the
//! app-server protocol: core starts a thread's [`McpServers`], offers their tools to the model
//! and turns what they report ([`McpEvent`]) into items and notifications.
//!
//! - [`config`]: `[mcp_servers.NAME]` tables → [`McpServerConfig`].
//! - `connection`: spawn or reach one server, shake hands, list its tools and resources.
//! - `handler`: the client side of a connection (elicitation, progress).
//! - `manager`: a thread's servers, started concurrently, each bounded by its timeouts.
//! - `reload`: a thread's servers brought in line with new configuration.
//! - [`oauth`]: logging in to HTTP servers that need OAuth, and their stored tokens.
//! - `probe`: servers started only to be looked at (a status listing without a thread), then
//!   stopped.

pub mod config;
mod connection;
mod events;
mod handler;
mod manager;
pub mod oauth;
mod probe;
mod reload;
mod status;

pub use config::{McpServerConfig, McpTransportConfig};
pub use events::McpEvent;
pub use manager::{McpCallError, McpServers};
pub use probe::probe_servers;
pub use status::{McpServerSnapshot, McpTool, StartupState};
