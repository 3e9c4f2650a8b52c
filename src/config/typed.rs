//! Turning the merged table into a [`Config`]: the typed view of config.toml's plain settings
//! ([`ConfigToml`]), the defaults of what is left unset, the built-in `openai` provider, the MCP
//! servers, and the key variables commands must not inherit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

use super::error::ConfigError;
use super::resolved::{Config, ConfigLayers};
use super::sections::model_catalog;
use crate::client::ProviderInfo;
use crate::core::sandboxing::Isolation;
use crate::core::shell_env::ShellEnvironmentPolicy;
use crate::core::{ApprovalPolicy, ReasoningSummaryMode, SandboxMode};

/// The typed view of config.toml (snake_case keys, all optional).
#[derive(Debug, Clone, Default, Deserialize)]
struct ConfigToml {
    model: Option<String>,
    model_provider: Option<String>,
    #[serde(default)]
    model_providers: BTreeMap<String, ProviderInfo>,
    /// Base URL of the built-in `openai` provider (the TypeScript SDK's `baseUrl` option).
    openai_base_url: Option<String>,
    approval_policy: Option<ApprovalPolicy>,
    sandbox_mode: Option<SandboxMode>,
    sandbox_workspace_write: Option<SandboxWorkspaceWriteToml>,
    sandbox_isolation: Option<Isolation>,
    shell_environment_policy: Option<ShellEnvironmentPolicy>,
    instructions: Option<String>,
    developer_instructions: Option<String>,
    model_reasoning_effort: Option<String>,
    model_reasoning_summary: Option<String>,
    model_context_window: Option<i64>,
    #[serde(default)]
    show_raw_agent_reasoning: bool,
    /// `streaming` (default) or `sequential_cutoff`.
    #[serde(default)]
    reasoning_summary_mode: ReasoningSummaryMode,
    max_line_bytes: Option<usize>,
    max_sampling_requests_per_turn: Option<u32>,
    thread_unload_delay_secs: Option<u64>,
    ingress_queue_capacity: Option<usize>,
    project_doc_max_bytes: Option<usize>,
    model_auto_compact_token_limit: Option<i64>,
    compact_prompt: Option<String>,
}

/// `[sandbox_workspace_write]`: what `workspace-write` adds beyond the thread's cwd.
#[derive(Debug, Clone, Default, Deserialize)]
struct SandboxWorkspaceWriteToml {
    #[serde(default)]
    writable_roots: Vec<PathBuf>,
    #[serde(default)]
    network_access: bool,
}

pub const DEFAULT_MODEL: &str = "gpt-5";
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Far beyond what a productive turn needs (a long agentic task runs tens to a few hundred
/// tool round trips), yet a model stuck calling tools forever is stopped within minutes to
/// hours rather than never.
pub const DEFAULT_MAX_SAMPLING_REQUESTS_PER_TURN: u32 = 1000;

impl Config {
    pub(super) fn from_table(home: &Path, table: Table) -> Result<Config, ConfigError> {
        let parsed: ConfigToml = Value::Table(table.clone())
            .try_into()
            .map_err(|error: toml::de::Error| ConfigError::Invalid(error.message().to_string()))?;
        let mut model_providers = BTreeMap::new();
        model_providers.insert("openai".to_string(), ProviderInfo::openai());
        for (id, mut provider) in parsed.model_providers {
            provider.id = id.clone();
            if provider.name.is_empty() {
                provider.name = id.clone();
            }
            model_providers.insert(id, provider);
        }
        if let (Some(url), Some(openai)) =
            (&parsed.openai_base_url, model_providers.get_mut("openai"))
        {
            openai.base_url = url.clone();
        }
        // Every provider may fall back to the key a client stored with `account/login/start`.
        let stored_key_file = crate::client::stored_key::stored_key_path(home);
        for provider in model_providers.values_mut() {
            provider.stored_key_file = Some(stored_key_file.clone());
        }
        let mut mcp_servers =
            crate::mcp::config::servers_from_table(&table).map_err(ConfigError::Invalid)?;
        for server in &mut mcp_servers {
            server.oauth_store = Some(crate::mcp::oauth::store_dir(home));
        }
        let mut shell_environment = parsed.shell_environment_policy.unwrap_or_default();
        shell_environment.key_variables = key_variables(&model_providers, &mcp_servers);
        Ok(Config {
            home: home.to_path_buf(),
            model: parsed.model.unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            model_provider_id: parsed
                .model_provider
                .unwrap_or_else(|| "openai".to_string()),
            model_providers,
            approval_policy: parsed.approval_policy.unwrap_or_default(),
            sandbox_mode: parsed.sandbox_mode.unwrap_or_default(),
            sandbox_writable_roots: parsed
                .sandbox_workspace_write
                .as_ref()
                .map(|table| table.writable_roots.clone())
                .unwrap_or_default(),
            sandbox_network_access: parsed
                .sandbox_workspace_write
                .as_ref()
                .is_some_and(|table| table.network_access),
            sandbox_isolation: parsed.sandbox_isolation.unwrap_or_default(),
            shell_environment: std::sync::Arc::new(shell_environment),
            instructions: parsed.instructions,
            developer_instructions: parsed.developer_instructions,
            model_reasoning_effort: parsed.model_reasoning_effort,
            model_reasoning_summary: parsed.model_reasoning_summary,
            model_context_window: parsed.model_context_window,
            show_raw_agent_reasoning: parsed.show_raw_agent_reasoning,
            apply_patch_streaming_events: table
                .get("features")
                .and_then(|features| features.get("apply_patch_streaming_events"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            step_model_switching: table
                .get("features")
                .and_then(|features| features.get("step_model_switching"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            reasoning_summary_mode: parsed.reasoning_summary_mode,
            max_line_bytes: parsed.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
            max_sampling_requests_per_turn: parsed
                .max_sampling_requests_per_turn
                .unwrap_or(DEFAULT_MAX_SAMPLING_REQUESTS_PER_TURN)
                .max(1),
            project_doc_max_bytes: parsed
                .project_doc_max_bytes
                .unwrap_or(crate::core::settings::DEFAULT_PROJECT_DOC_MAX_BYTES),
            model_auto_compact_token_limit: parsed.model_auto_compact_token_limit,
            compact_prompt: parsed.compact_prompt,
            model_catalog: std::sync::Arc::new(model_catalog(&table)),
            thread_unload_delay_secs: parsed.thread_unload_delay_secs.unwrap_or(30 * 60),
            ingress_queue_capacity: parsed.ingress_queue_capacity.unwrap_or(256).max(1),
            mcp_servers,
            table,
            layers: ConfigLayers::default(),
            warnings: Vec::new(),
            demo_base_url: None,
        })
    }
}

/// The environment variables that hold keys openturn itself uses: every provider's `env_key`,
/// `OPENAI_API_KEY` (the built-in provider's, whatever it is set to), and the MCP servers'
/// bearer token variables. Commands do not get them unless the policy names them.
fn key_variables(
    providers: &BTreeMap<String, ProviderInfo>,
    mcp_servers: &[crate::mcp::McpServerConfig],
) -> Vec<String> {
    let mut names: Vec<String> = vec!["OPENAI_API_KEY".to_string()];
    names.extend(providers.values().filter_map(|p| p.env_key.clone()));
    names.extend(
        mcp_servers
            .iter()
            .filter_map(|server| match &server.transport {
                crate::mcp::config::McpTransportConfig::Http {
                    bearer_token_env_var,
                    ..
                } => bearer_token_env_var.clone(),
                crate::mcp::config::McpTransportConfig::Stdio { .. } => None,
            }),
    );
    names.retain(|name| !name.is_empty());
    names.sort();
    names.dedup();
    names
}
