//! The resolved configuration: the values every source merged into ([`Config`]) and the sources
//! themselves ([`ConfigLayers`]). Plain data: loading and checking are the parent module's
//! (`config.rs`, with `config/providers.rs` for provider tables), which both build on these
//! types, so neither imports the other.

use std::collections::BTreeMap;
use std::path::PathBuf;

use toml::Table;

use crate::client::ProviderInfo;
use crate::core::models::ModelCatalog;
use crate::core::sandboxing::Isolation;
use crate::core::shell_env::ShellEnvironmentPolicy;
use crate::core::{ApprovalPolicy, ReasoningSummaryMode, SandboxMode};

use super::check::ConfigWarning;

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub home: PathBuf,
    pub model: String,
    pub model_provider_id: String,
    pub model_providers: BTreeMap<String, ProviderInfo>,
    pub approval_policy: ApprovalPolicy,
    pub sandbox_mode: SandboxMode,
    /// `[sandbox_workspace_write] writable_roots`: absolute directories `workspace-write`
    /// commands may also write.
    pub sandbox_writable_roots: Vec<PathBuf>,
    /// `[sandbox_workspace_write] network_access`: whether `workspace-write` commands may use
    /// the network.
    pub sandbox_network_access: bool,
    /// `sandbox_isolation`: `auto` (namespaces where they work), `namespaces` or `fallback`.
    pub sandbox_isolation: Isolation,
    /// `[shell_environment_policy]`, with the variables of the keys openturn uses (provider
    /// `env_key`s, `OPENAI_API_KEY`, MCP bearer token variables) to strip from commands.
    pub shell_environment: std::sync::Arc<ShellEnvironmentPolicy>,
    pub instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub model_reasoning_effort: Option<String>,
    pub model_reasoning_summary: Option<String>,
    pub model_context_window: Option<i64>,
    pub show_raw_agent_reasoning: bool,
    /// `features.apply_patch_streaming_events` (the reference's feature of that name): show a
    /// patch to clients while the model writes it.
    pub apply_patch_streaming_events: bool,
    /// `features.step_model_switching` (the reference's feature of that name): whether
    /// `turn/settings/update` may change a running turn's later requests.
    pub step_model_switching: bool,
    /// How reasoning summaries stream to clients (`reasoning_summary_mode`).
    pub reasoning_summary_mode: ReasoningSummaryMode,
    /// Longest accepted JSON-RPC input line.
    pub max_line_bytes: usize,
    /// Sampling requests one turn may send (model → tools → model …) before it fails.
    pub max_sampling_requests_per_turn: u32,
    /// How much of the project's `AGENTS.md` files the model is given (`project_doc_max_bytes`).
    pub project_doc_max_bytes: usize,
    /// `model_auto_compact_token_limit`: the estimated request size that triggers compaction.
    pub model_auto_compact_token_limit: Option<i64>,
    /// `compact_prompt`: the request for a summary, replacing the built-in one.
    pub compact_prompt: Option<String>,
    /// Which models reason: `[models.<id>]` entries over the built-in families.
    pub model_catalog: std::sync::Arc<ModelCatalog>,
    /// How long a loaded thread with no subscriber and no running turn stays loaded.
    pub thread_unload_delay_secs: u64,
    /// Requests queued for the dispatcher before new ones are refused as overloaded.
    pub ingress_queue_capacity: usize,
    /// `[mcp_servers.NAME]`: the MCP servers each thread starts, in name order.
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
    /// The merged table, kept for `config/read` and per-thread overrides.
    pub table: Table,
    /// What each source contributed before merging, for `config/read`'s origins and layers.
    pub layers: ConfigLayers,
    /// Settings accepted but not acted on as written (unknown keys, Codex-only keys), found
    /// while loading; clients hear them as `configWarning` after `initialize`.
    pub warnings: Vec<ConfigWarning>,
    /// Where the built-in `demo` provider listens, once the binary started it.
    pub demo_base_url: Option<String>,
}

/// The sources of the merged table, lowest precedence first.
#[derive(Debug, Clone, Default)]
pub struct ConfigLayers {
    /// `home/config.toml`, whether or not it exists.
    pub user_file: PathBuf,
    /// The file's text as loaded (`None` when absent), so its version names what was read.
    pub user_text: Option<String>,
    pub user_table: Table,
    /// The `-c key=value` overrides, as a table of their own.
    pub session_flags: Table,
    /// The same overrides as given, so the configuration can be loaded again after a write.
    pub flag_args: Vec<String>,
}
