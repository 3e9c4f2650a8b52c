//! The test MCP server (`tests/data/mcp_server.py`) and the `-c` overrides that declare it, for
//! the tests of MCP servers and their tools.

use std::path::PathBuf;

/// Path of the test MCP server script.
pub fn server_script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/mcp_server.py")
        .display()
        .to_string()
}

/// `-c` overrides declaring a stdio server `name` running the test server with `args`.
pub fn server_overrides(name: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec![server_script()];
    all.extend(args.iter().map(|a| a.to_string()));
    vec![
        format!("mcp_servers.{name}.command=\"python3\""),
        format!(
            "mcp_servers.{name}.args={}",
            serde_json::to_string(&all).unwrap_or_default()
        ),
    ]
}
