//! The JSON-RPC envelopes and the v2 payload types, wire-compatible with the Codex app-server
//! protocol's core subset. Plain data: serde and schemars only, no behaviour, no imports from
//! the rest of the crate. Field names are camelCase on the wire unless noted.

pub mod account;
pub mod approval;
pub mod background_terminals;
pub mod collaboration_mode;
pub mod command;
pub mod common;
pub mod compact;
pub mod config;
pub mod config_write;
pub mod file_search;
pub mod fs;
pub mod goal;
pub mod initialize;
pub mod item;
pub mod jsonrpc;
pub mod mcp;
pub mod mcp_oauth;
pub mod methods;
pub mod model;
pub mod model_provider;
pub mod notification;
pub mod permission_profile;
pub mod process;
pub mod rate_limits;
pub mod review;
pub mod skills;
pub mod thread;
pub mod thread_history;
pub mod thread_items;
pub mod thread_search;
pub mod thread_settings;
pub mod thread_turns;
pub mod turn;
pub mod user_input;

/// The version of the reference Codex app-server whose protocol openturn implements (the
/// binary the protocol was observed from). `initialize` reports it as the first `x.y.z` of
/// `userAgent` and as `serverInfo.version`, because clients gate features on that number
/// (the Python SDK needs >= 0.151.0); openturn's own version travels in `openturnVersion`.
pub const REFERENCE_VERSION: &str = "0.171.0";

/// The version of the app-server protocol this build implements, reported by `initialize`.
pub const PROTOCOL_VERSION: &str = "v2 (codex app-server core subset, observed 0.171.0)";
