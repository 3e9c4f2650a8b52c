//! Configuration: `$OPENTURN_HOME/config.toml`, then `-c key=value` overrides, then per-thread
//! overrides from `thread/start`'s `config` object. Keys are dotted paths into the TOML table;
//! override values are parsed as TOML and fall back to plain strings. Each source is checked on
//! its own ([`check`]) before merging, so an error or warning can name the file or flag.

mod check;
mod error;
pub mod features;
mod keys;
pub mod provider_edit;
mod providers;
mod resolved;
mod skill_keys;
pub mod write;
mod write_edit;
mod write_error;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

pub use crate::client::ProviderInfo;
use crate::core::models::{
    ApplyPatchForm, ModelCatalog, ModelReasoning, DEFAULT_REASONING_SUMMARY,
};
use crate::core::sandboxing::Isolation;
use crate::core::shell_env::ShellEnvironmentPolicy;
use crate::core::tool_set::{ToolConfig, WebSearchMode};
use crate::core::{ApprovalPolicy, ReasoningSummaryMode, SandboxMode};

pub use check::{ConfigSource, ConfigWarning};
pub use error::ConfigError;
pub use keys::known_keys;
pub use providers::DEMO_PROVIDER_ID;
pub use resolved::{Config, ConfigLayers};

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

/// What `[models.<id>]` tables say about reasoning: `supports_reasoning = false` marks a model
/// that does not reason; `supports_reasoning = true` or a `default_reasoning_summary` marks one
/// that does (`"none"` asks for no summary). A table naming neither leaves the model to the
/// built-in families. Each source was checked by kind when loaded, so a value of the wrong type
/// never gets here.
fn model_catalog(table: &Table) -> ModelCatalog {
    let entries = table.get("models").and_then(Value::as_table);
    let mut configured = BTreeMap::new();
    for (id, spec) in entries.into_iter().flatten() {
        let supports = spec.get("supports_reasoning").and_then(Value::as_bool);
        let summary = spec
            .get("default_reasoning_summary")
            .and_then(Value::as_str);
        let reasoning = match (supports, summary) {
            (Some(false), _) => ModelReasoning::Unsupported,
            (None, None) => continue,
            (_, summary) => ModelReasoning::Supported {
                default_summary: match summary.unwrap_or(DEFAULT_REASONING_SUMMARY) {
                    "none" => None,
                    summary => Some(summary.to_string()),
                },
            },
        };
        configured.insert(id.clone(), reasoning);
    }
    let per_model = entries
        .into_iter()
        .flatten()
        .filter_map(|(id, spec)| Some((id.clone(), apply_patch_form(spec.as_table()?)?)))
        .collect();
    ModelCatalog::new(configured)
        .with_apply_patch_forms(apply_patch_form(table), per_model)
        .with_tool_config(tool_config(table))
}

/// `[tools]` switches (`name = bool` or `name.enabled = bool`), `[models.<id>] tools` lists and
/// the top-level `web_search` mode. The checker refused values of the wrong kind already.
fn tool_config(table: &Table) -> ToolConfig {
    let switches = table
        .get("tools")
        .and_then(Value::as_table)
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let enabled = match value {
                Value::Boolean(enabled) => Some(*enabled),
                Value::Table(options) => options.get("enabled").and_then(Value::as_bool),
                _ => None,
            }?;
            Some((name.clone(), enabled))
        })
        .collect();
    let per_model = table
        .get("models")
        .and_then(Value::as_table)
        .into_iter()
        .flatten()
        .filter_map(|(id, spec)| {
            let names = spec.get("tools")?.as_array()?;
            let names = names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_string))
                .collect();
            Some((id.clone(), names))
        })
        .collect();
    let web_search = match table.get("web_search").and_then(Value::as_str) {
        Some("disabled") => Some(WebSearchMode::Disabled),
        Some("cached") => Some(WebSearchMode::Cached),
        Some("live") => Some(WebSearchMode::Live),
        Some("indexed") => Some(WebSearchMode::Indexed),
        _ => None,
    };
    ToolConfig {
        switches,
        per_model,
        web_search,
        ..ToolConfig::default()
    }
}

/// `apply_patch_tool_type` in `table` (top level or a `[models.<id>]` table): `"freeform"` (a
/// custom tool with a grammar) or `"function"` (a JSON function tool). The checker refused any
/// other value already.
fn apply_patch_form(table: &Table) -> Option<ApplyPatchForm> {
    match table.get("apply_patch_tool_type").and_then(Value::as_str) {
        Some("freeform") => Some(ApplyPatchForm::Freeform),
        Some("function") => Some(ApplyPatchForm::Function),
        _ => None,
    }
}

/// `$OPENTURN_HOME`, else `~/.openturn`.
pub fn default_home() -> PathBuf {
    if let Some(home) = std::env::var_os("OPENTURN_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let user_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    user_home.join(".openturn")
}

impl Config {
    /// Loads `home/config.toml` (absent is fine) and applies `overrides` (`key=value` strings).
    pub fn load(home: &Path, overrides: &[String]) -> Result<Config, ConfigError> {
        let path = home.join("config.toml");
        let user_text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let config = Config::from_sources(home, path, user_text, overrides)?;
        for warning in &config.warnings {
            tracing::warn!("{}", warning.summary);
        }
        Ok(config)
    }

    /// The configuration as the user file says now (it may have been written since this was
    /// loaded), with the same flags and demo provider.
    pub fn reloaded(&self) -> Result<Config, ConfigError> {
        let path = self.layers.user_file.clone();
        let user_text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        if user_text == self.layers.user_text {
            return Ok(self.clone());
        }
        let mut config = Config::from_sources(&self.home, path, user_text, &self.layers.flag_args)?;
        config.demo_base_url = self.demo_base_url.clone();
        config.insert_demo_provider();
        Ok(config)
    }

    /// Whether feature flag `name` is on: set at runtime, else `features.NAME`, else its
    /// default ([`features`]).
    pub fn feature_enabled(&self, name: &str) -> bool {
        features::enabled_in(&self.table, name)
    }

    /// Whether `text`, as the user's config.toml under this daemon's `-c` flags, would load:
    /// the test a write passes before it replaces the file.
    pub(crate) fn check_user_text(&self, text: &str) -> Result<(), ConfigError> {
        let path = self.layers.user_file.clone();
        Config::from_sources(
            &self.home,
            path,
            Some(text.to_string()),
            &self.layers.flag_args,
        )
        .map(drop)
    }

    /// The configuration the user file's `user_text` and the `overrides` flags make.
    fn from_sources(
        home: &Path,
        path: PathBuf,
        user_text: Option<String>,
        overrides: &[String],
    ) -> Result<Config, ConfigError> {
        let user_table = match &user_text {
            Some(text) => text.parse::<Table>().map_err(|error| ConfigError::Parse {
                path: path.clone(),
                message: error.to_string(),
            })?,
            None => Table::new(),
        };
        let mut warnings = check::check_source(&user_table, &ConfigSource::File(path.clone()))?;
        let mut table = user_table.clone();
        let mut session_flags = Table::new();
        for raw in overrides {
            let (key, value) = parse_override(raw)?;
            let mut flag = Table::new();
            set_dotted(&mut flag, &key, value.clone())?;
            warnings.extend(check::check_source(
                &flag,
                &ConfigSource::Flag(raw.clone()),
            )?);
            set_dotted(&mut table, &key, value.clone())?;
            set_dotted(&mut session_flags, &key, value)?;
        }
        let layers = ConfigLayers {
            user_file: path,
            user_text,
            user_table,
            session_flags,
            flag_args: overrides.to_vec(),
        };
        warnings.extend(providers::check_provider_tables(
            &table, &layers, overrides,
        )?);
        let mut config = Config::from_table(home, table)?;
        config.layers = layers;
        config.warnings = warnings;
        Ok(config)
    }

    /// A copy with thread-level overrides (a JSON object of dotted keys or nested tables).
    pub fn with_json_overrides(
        &self,
        overrides: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Config, ConfigError> {
        let mut table = self.table.clone();
        let mut warnings = Vec::new();
        for (key, value) in overrides {
            let value = json_to_toml(value)
                .ok_or_else(|| ConfigError::Invalid(format!("`{key}` cannot be null")))?;
            let mut one = Table::new();
            set_dotted(&mut one, key, value.clone())?;
            warnings.extend(check::check_source(&one, &ConfigSource::ThreadConfig)?);
            set_dotted(&mut table, key, value)?;
        }
        warnings.extend(providers::check_thread_provider_tables(
            &self.table,
            &table,
        )?);
        let mut config = Config::from_table(&self.home, table)?;
        config.layers = self.layers.clone();
        config.warnings = warnings;
        config.demo_base_url = self.demo_base_url.clone();
        config.insert_demo_provider();
        Ok(config)
    }

    fn from_table(home: &Path, table: Table) -> Result<Config, ConfigError> {
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

    /// The provider with `id`, or a clear error naming the missing table.
    pub fn provider(&self, id: &str) -> Result<ProviderInfo, ConfigError> {
        self.model_providers
            .get(id)
            .cloned()
            .ok_or_else(|| providers::unknown_provider(id))
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

/// `key=value` → (key, TOML value); a value that is not TOML is taken as a string.
pub fn parse_override(raw: &str) -> Result<(String, Value), ConfigError> {
    let (key, value) = raw
        .split_once('=')
        .ok_or_else(|| ConfigError::BadOverride(raw.to_string()))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(ConfigError::BadOverride(raw.to_string()));
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<Table>()
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

fn set_dotted(table: &mut Table, key: &str, value: Value) -> Result<(), ConfigError> {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, parents) = parts
        .split_last()
        .ok_or_else(|| ConfigError::BadOverride(key.to_string()))?;
    let mut current = table;
    for part in parents {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        current = match entry {
            Value::Table(inner) => inner,
            _ => {
                return Err(ConfigError::Invalid(format!(
                    "`{key}`: `{part}` is not a table"
                )))
            }
        };
    }
    current.insert(last.to_string(), value);
    Ok(())
}

fn json_to_toml(value: &serde_json::Value) -> Option<Value> {
    Some(match value {
        serde_json::Value::Null => return None,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64()?),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => {
            Value::Array(items.iter().filter_map(json_to_toml).collect())
        }
        serde_json::Value::Object(map) => Value::Table(
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_as_toml_with_string_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::load(
            dir.path(),
            &[
                "model=\"gpt-5-mini\"".to_string(),
                "model_provider=local".to_string(),
                "model_providers.local.base_url=http://127.0.0.1:9/v1".to_string(),
                "model_providers.local.request_max_retries=0".to_string(),
            ],
        )
        .unwrap();
        assert_eq!(config.model, "gpt-5-mini");
        let provider = config.provider("local").unwrap();
        assert_eq!(provider.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(provider.request_max_retries, 0);
        assert!(matches!(
            config.provider("nope"),
            Err(ConfigError::UnknownProvider(_))
        ));
    }
}

impl Config {
    /// `[[skills.config]]` entries (`name` or `path`, and `enabled`), in order. Entries naming
    /// neither, or without a boolean `enabled`, are skipped with a warning.
    pub fn skill_toggles(&self) -> Vec<crate::core::skills::SkillToggle> {
        let entries = self
            .table
            .get("skills")
            .and_then(|skills| skills.get("config"))
            .and_then(Value::as_array);
        let mut toggles = Vec::new();
        for entry in entries.into_iter().flatten() {
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string);
            let path = entry.get("path").and_then(Value::as_str).map(PathBuf::from);
            match (entry.get("enabled").and_then(Value::as_bool), &name, &path) {
                (Some(enabled), Some(_), _) | (Some(enabled), _, Some(_)) => {
                    toggles.push(crate::core::skills::SkillToggle {
                        name,
                        path,
                        enabled,
                    })
                }
                _ => tracing::warn!(
                    "ignoring a skills.config entry: it needs `name` or `path`, and `enabled`"
                ),
            }
        }
        toggles
    }
}

/// The reference's feature names (see `src/reference_features.txt`).
const REFERENCE_FEATURES: &str = include_str!("reference_features.txt");

/// Whether `name` is a feature the reference CLI knows.
pub fn is_known_feature(name: &str) -> bool {
    known_features().any(|known| known == name)
}

/// Every feature name the reference CLI knows.
pub(crate) fn known_features() -> impl Iterator<Item = &'static str> {
    REFERENCE_FEATURES
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(str::trim)
        .filter(|line| !line.is_empty())
}

/// `--enable NAME` / `--disable NAME` as the `-c features.NAME=true|false` overrides they stand
/// for (enables first, so `--disable` wins for a name given both ways), plus a warning for each
/// name the reference does not know. An unknown name is still set: a later openturn may read
/// it, and nothing reads it wrongly now.
pub fn feature_overrides(enable: &[String], disable: &[String]) -> (Vec<String>, Vec<String>) {
    let mut overrides = Vec::new();
    let mut warnings = Vec::new();
    let flags = enable
        .iter()
        .map(|name| (name, true))
        .chain(disable.iter().map(|name| (name, false)));
    for (name, on) in flags {
        let name = name.trim();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            warnings.push(format!(
                "ignoring feature flag `{name}`: a feature name is letters, digits, `_` or `-`"
            ));
            continue;
        }
        if !is_known_feature(name) {
            warnings.push(format!(
                "unknown feature `{name}`: setting features.{name} anyway"
            ));
        }
        overrides.push(format!("features.{name}={on}"));
    }
    (overrides, warnings)
}

#[cfg(test)]
mod feature_flag_tests {
    use super::*;

    #[test]
    fn enable_and_disable_become_overrides_and_unknown_names_warn() {
        let (overrides, warnings) = feature_overrides(
            &["goals".to_string(), "no_such_feature".to_string()],
            &["goals".to_string(), "bad name".to_string()],
        );
        assert_eq!(
            overrides,
            vec![
                "features.goals=true",
                "features.no_such_feature=true",
                "features.goals=false"
            ]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("no_such_feature"));
        assert!(warnings[1].contains("bad name"));
        assert!(is_known_feature("fast_mode"));
        assert!(!is_known_feature("# Feature names"));
    }
}
