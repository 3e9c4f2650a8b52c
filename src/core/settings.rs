//! Per-thread settings that turns read and `turn/start` overrides change, and the one place
//! their precedence is decided ([`resolve_thread_settings`], [`ThreadSettings::apply_overrides`]):
//! configuration, then what the thread's rollout recorded, then the `thread/start` (resume,
//! fork) params, then `turn/start` overrides — later wins (docs/PROTOCOL.md §5.1). The server
//! only converts protocol params into [`SettingsOverrides`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::client::ProviderInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    Untrusted,
    #[default]
    OnRequest,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    #[default]
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

/// How reasoning summaries reach the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningSummaryMode {
    /// Summary deltas and part boundaries are streamed as they arrive.
    #[default]
    Streaming,
    /// Partial deltas are ignored; each finished summary part (`reasoning_summary_text.done`) is
    /// shown whole, for the active reasoning item only, with a section break before index > 0.
    SequentialCutoff,
}

/// A client-implemented tool declared on `thread/start` (`dynamicTools`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DynamicToolSpec {
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    pub description: String,
    pub input_schema: serde_json::Value,
    /// `deferLoading`: left out of the request for a model offered `tool_search`, which finds
    /// it instead (only a tool inside a namespace may be deferred).
    #[serde(default)]
    pub defer_loading: bool,
}

/// What a thread's turns run with.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSettings {
    pub model: String,
    pub provider: ProviderInfo,
    pub cwd: PathBuf,
    pub base_instructions: String,
    pub developer_instructions: Option<String>,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: SandboxMode,
    /// Directories besides the cwd that `workspace-write` commands may write (a turn's
    /// `sandboxPolicy.writableRoots`).
    pub sandbox_writable_roots: Vec<PathBuf>,
    /// Whether sandboxed commands may open internet sockets (`sandboxPolicy.networkAccess`).
    pub sandbox_network_access: bool,
    /// Paths no sandboxed command may write, even inside a writable root: openturn's home.
    pub protected_paths: Vec<PathBuf>,
    /// `sandbox_isolation` in config.toml: namespaces, the fallback, or whichever works.
    pub sandbox_isolation: crate::sandbox::Isolation,
    /// `[shell_environment_policy]`: the environment commands get.
    pub shell_environment: std::sync::Arc<super::shell_env::ShellEnvironmentPolicy>,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub show_raw_agent_reasoning: bool,
    /// `features.apply_patch_streaming_events`: a patch's `fileChange` item starts when the
    /// patch starts streaming and previews of it follow (`item/fileChange/patchUpdated`). Off
    /// (the reference's default), the item starts once its changes are known, with them, which
    /// is all clients such as the ACP bridge read.
    pub apply_patch_streaming_events: bool,
    /// The client's name, sent upstream as `originator`.
    pub originator: String,
    pub model_context_window: Option<i64>,
    /// `reasoning_summary_mode` in config.toml.
    pub reasoning_summary_mode: ReasoningSummaryMode,
    /// Plan mode (`collaborationMode: {"mode": "plan"}` on `turn/start`): `<proposed_plan>` blocks
    /// become a plan item.
    pub plan_mode: bool,
    pub dynamic_tools: Vec<DynamicToolSpec>,
    /// The MCP servers the thread starts (configuration, or the `thread/start` `config`).
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
    /// `max_sampling_requests_per_turn` in config.toml: the requests one turn may send before
    /// it fails, so a model that keeps calling tools cannot loop forever.
    pub max_sampling_requests_per_turn: u32,
    /// `project_doc_max_bytes` in config.toml: how much of the `AGENTS.md` files the model gets.
    pub project_doc_max_bytes: usize,
    /// The user's own `AGENTS.md` (`$OPENTURN_HOME/AGENTS.md`), told before the project's.
    pub user_agents_file: Option<PathBuf>,
    /// Which models reason; consulted for every request, since `turn/start` may switch models.
    pub model_catalog: std::sync::Arc<super::models::ModelCatalog>,
    /// Folders searched for user skills (`$OPENTURN_HOME/skills` and a client's extra roots);
    /// each turn names the skills found there and in the project to the model.
    pub user_skill_roots: Vec<PathBuf>,
    /// The thread's service tier (`thread/start` or a `turn/start`'s `serviceTier`), as sent
    /// upstream; `None` leaves the provider's default.
    pub service_tier: Option<String>,
    /// `[[skills.config]]` entries: skills turned off here are not named to the model.
    pub skill_toggles: Vec<super::skills::SkillToggle>,
    /// `skills.include_instructions` in config.toml: whether requests name the skills found
    /// on disk to the model (the reference's side threads turn it off).
    pub include_skills_instructions: bool,
    /// `model_auto_compact_token_limit` in config.toml: the estimated request size at which a
    /// turn compacts the history first; `None` for the default (see
    /// [`ThreadSettings::auto_compact_limit`]).
    pub auto_compact_token_limit: Option<i64>,
    /// `compact_prompt` in config.toml: replaces the built-in request for a summary.
    pub compact_prompt: Option<String>,
}

/// The part of [`ThreadSettings`] a thread keeps across daemon restarts: what `thread/start`
/// set and later `turn/start` overrides changed, so a resumed thread's next request is built as
/// it would have been. Every field is optional (older files, partial snapshots) and unknown
/// fields are ignored, so the format can grow. The provider is not here: the session meta has it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PersistedSettings {
    pub model: Option<String>,
    pub cwd: Option<PathBuf>,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub approval_policy: Option<ApprovalPolicy>,
    pub sandbox: Option<SandboxMode>,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub plan_mode: Option<bool>,
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
}

impl PersistedSettings {
    /// Serialized form for the rollout (`SessionMeta::settings`, `settings_changed`).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored snapshot; one that does not parse is ignored (logged), never fatal: the
    /// thread then falls back to its configuration.
    pub fn from_value(value: &serde_json::Value) -> Option<PersistedSettings> {
        match serde_json::from_value(value.clone()) {
            Ok(settings) => Some(settings),
            Err(error) => {
                tracing::warn!(%error, "ignoring unreadable persisted thread settings");
                None
            }
        }
    }

    /// What a rollout says the thread's settings are: the session meta's snapshot, then each
    /// `settings_changed` line in order (fields it carries replace earlier ones).
    pub fn from_rollout(contents: &crate::rollout::RolloutContents) -> PersistedSettings {
        let mut merged = contents
            .meta
            .settings
            .as_ref()
            .and_then(PersistedSettings::from_value)
            .unwrap_or_default();
        for item in &contents.items {
            if let crate::rollout::RolloutItem::SettingsChanged { settings } = item {
                if let Some(changed) = PersistedSettings::from_value(settings) {
                    merged.merge(changed);
                }
            }
        }
        merged
    }

    fn merge(&mut self, newer: PersistedSettings) {
        fn take<T>(slot: &mut Option<T>, newer: Option<T>) {
            if newer.is_some() {
                *slot = newer;
            }
        }
        take(&mut self.model, newer.model);
        take(&mut self.cwd, newer.cwd);
        take(&mut self.base_instructions, newer.base_instructions);
        take(
            &mut self.developer_instructions,
            newer.developer_instructions,
        );
        take(&mut self.approval_policy, newer.approval_policy);
        take(&mut self.sandbox, newer.sandbox);
        take(&mut self.reasoning_effort, newer.reasoning_effort);
        take(&mut self.reasoning_summary, newer.reasoning_summary);
        take(&mut self.plan_mode, newer.plan_mode);
        take(&mut self.dynamic_tools, newer.dynamic_tools);
    }
}

/// Settings a request names: the params of `thread/start` (`thread/resume`, `thread/fork`), or
/// the overrides of `turn/start`. `None` keeps the value of the layer below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsOverrides {
    pub model: Option<String>,
    /// Thread requests only: a provider is chosen when the thread is opened.
    pub provider_id: Option<String>,
    pub cwd: Option<PathBuf>,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub approval_policy: Option<ApprovalPolicy>,
    /// The sandbox mode alone (`thread/start`'s `sandbox`): writable roots and network access
    /// then come from the configuration.
    pub sandbox: Option<SandboxMode>,
    /// A whole sandbox policy (`turn/start`'s `sandboxPolicy`): mode, writable roots, network.
    pub sandbox_policy: Option<(SandboxMode, Vec<PathBuf>, bool)>,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub plan_mode: Option<bool>,
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
    pub service_tier: Option<String>,
    /// Drops the thread's service tier (`serviceTier: null` on `thread/settings/update`).
    pub clear_service_tier: bool,
    /// A collaboration mode (`thread/settings/update`'s `collaborationMode`): plan or default,
    /// with the model and effort the mode runs with. Its model and effort win over the plain
    /// `model` and `effort` of the same request: the mode names what it runs with.
    pub collaboration: Option<CollaborationOverride>,
}

/// See [`SettingsOverrides::collaboration`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollaborationOverride {
    pub plan: bool,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
}

/// `turn/settings/update`: what the running turn's next requests use instead of the thread's
/// settings, for that turn only. `service_tier` is `Some(None)` to clear the tier.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnSettingsPatch {
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub service_tier: Option<Option<String>>,
}

impl TurnSettingsPatch {
    /// Folds a later patch into this one: what it names replaces what this one named.
    pub fn merge(&mut self, newer: TurnSettingsPatch) {
        if newer.model.is_some() {
            self.model = newer.model;
        }
        if newer.reasoning_effort.is_some() {
            self.reasoning_effort = newer.reasoning_effort;
        }
        if newer.reasoning_summary.is_some() {
            self.reasoning_summary = newer.reasoning_summary;
        }
        if newer.service_tier.is_some() {
            self.service_tier = newer.service_tier;
        }
    }

    /// The top layer of one request of the turn, over the thread's settings.
    pub fn apply(&self, settings: &mut ThreadSettings) {
        if let Some(model) = &self.model {
            settings.model = model.clone();
        }
        if let Some(effort) = &self.reasoning_effort {
            settings.reasoning_effort = Some(effort.clone());
        }
        if let Some(summary) = &self.reasoning_summary {
            settings.reasoning_summary = Some(summary.clone());
        }
        if let Some(tier) = &self.service_tier {
            settings.service_tier = tier.clone();
        }
    }
}

/// What the configuration (config.toml, `-c`, a request's `config` object) gives a thread, and
/// what the connection supplies (the client's name, skill folders): the lowest layer.
#[derive(Debug, Clone)]
pub struct ConfiguredSettings {
    pub model: String,
    pub provider_id: String,
    pub instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: SandboxMode,
    /// `[sandbox_workspace_write]`: applies to `workspace-write` only.
    pub sandbox_writable_roots: Vec<PathBuf>,
    pub sandbox_network_access: bool,
    pub protected_paths: Vec<PathBuf>,
    pub sandbox_isolation: crate::sandbox::Isolation,
    pub shell_environment: std::sync::Arc<super::shell_env::ShellEnvironmentPolicy>,
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub show_raw_agent_reasoning: bool,
    pub apply_patch_streaming_events: bool,
    pub originator: String,
    pub model_context_window: Option<i64>,
    pub reasoning_summary_mode: ReasoningSummaryMode,
    pub max_sampling_requests_per_turn: u32,
    pub project_doc_max_bytes: usize,
    pub user_agents_file: Option<PathBuf>,
    pub model_catalog: std::sync::Arc<super::models::ModelCatalog>,
    pub user_skill_roots: Vec<PathBuf>,
    pub skill_toggles: Vec<super::skills::SkillToggle>,
    pub include_skills_instructions: bool,
    /// `[mcp_servers.NAME]`, with a thread request's `config` already applied.
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
    pub auto_compact_token_limit: Option<i64>,
    pub compact_prompt: Option<String>,
}

/// What a persisted thread's rollout says: its recorded settings, and the session meta's model,
/// provider and cwd (files older than recorded settings have only those).
#[derive(Debug, Clone, Default)]
pub struct SavedSettings {
    pub settings: PersistedSettings,
    pub model: Option<String>,
    pub provider_id: Option<String>,
    pub cwd: Option<PathBuf>,
}

impl SavedSettings {
    pub fn from_rollout(contents: &crate::rollout::RolloutContents) -> SavedSettings {
        SavedSettings {
            settings: PersistedSettings::from_rollout(contents),
            model: Some(contents.meta.model.clone()),
            provider_id: Some(contents.meta.model_provider.clone()),
            cwd: Some(PathBuf::from(&contents.meta.cwd)),
        }
    }

    /// Forgets what the request's `config` object names (by config.toml key): a key given
    /// there beats the recorded value, as an explicit param does.
    fn yield_to_config(&mut self, named: &dyn Fn(&str) -> bool) {
        fn forget<T>(slot: &mut Option<T>, key: bool) {
            if key {
                *slot = None;
            }
        }
        let saved = &mut self.settings;
        forget(&mut saved.model, named("model"));
        forget(&mut self.model, named("model"));
        forget(&mut self.provider_id, named("model_provider"));
        forget(&mut saved.base_instructions, named("instructions"));
        forget(
            &mut saved.developer_instructions,
            named("developer_instructions"),
        );
        forget(&mut saved.approval_policy, named("approval_policy"));
        forget(&mut saved.sandbox, named("sandbox_mode"));
        forget(&mut saved.reasoning_effort, named("model_reasoning_effort"));
        forget(
            &mut saved.reasoning_summary,
            named("model_reasoning_summary"),
        );
    }
}

/// A thread's settings from its layers, lowest first: `configured`, then `saved` (a resumed or
/// forked thread's rollout, minus the keys the request's `config` object names, see
/// `config_names`), then `requested` (the thread request's params). `provider` looks up the
/// chosen provider id; `current_dir` is the cwd of last resort.
pub fn resolve_thread_settings<E>(
    configured: ConfiguredSettings,
    saved: Option<SavedSettings>,
    config_names: &dyn Fn(&str) -> bool,
    requested: SettingsOverrides,
    provider: impl FnOnce(&str) -> Result<ProviderInfo, E>,
    current_dir: impl FnOnce() -> Result<PathBuf, E>,
) -> Result<ThreadSettings, E> {
    let mut saved = saved.unwrap_or_default();
    saved.yield_to_config(config_names);
    let recorded = saved.settings;
    let provider_id = requested
        .provider_id
        .or(saved.provider_id)
        .unwrap_or(configured.provider_id);
    let model = requested
        .model
        .or(recorded.model)
        .or(saved.model)
        .unwrap_or(configured.model);
    let cwd = match requested.cwd.or(recorded.cwd).or(saved.cwd) {
        Some(cwd) => cwd,
        None => current_dir()?,
    };
    let sandbox = requested
        .sandbox
        .or(recorded.sandbox)
        .unwrap_or(configured.sandbox);
    let workspace_write = sandbox == SandboxMode::WorkspaceWrite;
    let mut settings = ThreadSettings {
        model,
        provider: provider(&provider_id)?,
        cwd,
        base_instructions: requested
            .base_instructions
            .or(recorded.base_instructions)
            .or(configured.instructions)
            .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.to_string()),
        developer_instructions: requested
            .developer_instructions
            .or(recorded.developer_instructions)
            .or(configured.developer_instructions),
        approval_policy: requested
            .approval_policy
            .or(recorded.approval_policy)
            .unwrap_or(configured.approval_policy),
        sandbox,
        sandbox_writable_roots: if workspace_write {
            configured.sandbox_writable_roots
        } else {
            Vec::new()
        },
        sandbox_network_access: workspace_write && configured.sandbox_network_access,
        protected_paths: configured.protected_paths,
        sandbox_isolation: configured.sandbox_isolation,
        shell_environment: configured.shell_environment,
        reasoning_effort: recorded.reasoning_effort.or(configured.reasoning_effort),
        reasoning_summary: recorded.reasoning_summary.or(configured.reasoning_summary),
        show_raw_agent_reasoning: configured.show_raw_agent_reasoning,
        apply_patch_streaming_events: configured.apply_patch_streaming_events,
        originator: configured.originator,
        model_context_window: configured.model_context_window,
        reasoning_summary_mode: configured.reasoning_summary_mode,
        plan_mode: recorded.plan_mode.unwrap_or(false),
        dynamic_tools: requested
            .dynamic_tools
            .or(recorded.dynamic_tools)
            .unwrap_or_default(),
        max_sampling_requests_per_turn: configured.max_sampling_requests_per_turn,
        project_doc_max_bytes: configured.project_doc_max_bytes,
        user_agents_file: configured.user_agents_file,
        model_catalog: configured.model_catalog,
        user_skill_roots: configured.user_skill_roots,
        service_tier: requested.service_tier,
        skill_toggles: configured.skill_toggles,
        include_skills_instructions: configured.include_skills_instructions,
        mcp_servers: configured.mcp_servers,
        auto_compact_token_limit: configured.auto_compact_token_limit,
        compact_prompt: configured.compact_prompt,
    };
    // What a thread request may not set stays as resolved above; the rest of `requested`
    // (effort, summary, plan mode, a whole sandbox policy) is a turn's to give.
    let turn_only = SettingsOverrides {
        reasoning_effort: requested.reasoning_effort,
        reasoning_summary: requested.reasoning_summary,
        plan_mode: requested.plan_mode,
        sandbox_policy: requested.sandbox_policy,
        ..SettingsOverrides::default()
    };
    settings.apply_overrides(turn_only);
    Ok(settings)
}

/// The usable context window of a model the configuration says nothing about: 95% of 272000,
/// the rest left for the model's own overhead (docs/PROTOCOL.md §10).
pub const DEFAULT_CONTEXT_WINDOW: i64 = 272_000 * 95 / 100;

/// The share of the context window a request may fill before compaction runs, by default: the
/// rest is room for the model's answer and for the estimate being off.
pub const AUTO_COMPACT_PERCENT: i64 = 80;

/// `project_doc_max_bytes` when config.toml does not say: how much of the project's `AGENTS.md`
/// files the context (`context.rs`) includes.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: usize = 32 * 1024;

impl ThreadSettings {
    /// The snapshot of these settings that the rollout keeps.
    pub fn persisted(&self) -> PersistedSettings {
        PersistedSettings {
            model: Some(self.model.clone()),
            cwd: Some(self.cwd.clone()),
            base_instructions: Some(self.base_instructions.clone()),
            developer_instructions: self.developer_instructions.clone(),
            approval_policy: Some(self.approval_policy),
            sandbox: Some(self.sandbox),
            reasoning_effort: self.reasoning_effort.clone(),
            reasoning_summary: self.reasoning_summary.clone(),
            plan_mode: Some(self.plan_mode),
            dynamic_tools: Some(self.dynamic_tools.clone()),
        }
    }

    /// Applies a `turn/start`'s overrides: the top layer. They stick for later turns.
    pub fn apply_overrides(&mut self, overrides: SettingsOverrides) {
        fn set<T>(slot: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *slot = value;
            }
        }
        set(&mut self.model, overrides.model);
        set(&mut self.cwd, overrides.cwd);
        set(&mut self.approval_policy, overrides.approval_policy);
        if let Some((mode, writable_roots, network_access)) = overrides.sandbox_policy {
            self.sandbox = mode;
            self.sandbox_writable_roots = writable_roots;
            self.sandbox_network_access = network_access;
        }
        if let Some(effort) = overrides.reasoning_effort {
            self.reasoning_effort = Some(effort);
        }
        if let Some(summary) = overrides.reasoning_summary {
            self.reasoning_summary = Some(summary);
        }
        set(&mut self.plan_mode, overrides.plan_mode);
        if overrides.clear_service_tier {
            self.service_tier = None;
        }
        if let Some(tier) = overrides.service_tier {
            self.service_tier = Some(tier);
        }
        if let Some(mode) = overrides.collaboration {
            self.plan_mode = mode.plan;
            set(&mut self.model, mode.model);
            if let Some(effort) = mode.reasoning_effort {
                self.reasoning_effort = Some(effort);
            }
        }
    }

    /// The context window reported with token usage: `model_context_window` from the
    /// configuration, else [`DEFAULT_CONTEXT_WINDOW`].
    pub fn context_window(&self) -> i64 {
        self.model_context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }

    /// The request size (estimated tokens) at which compaction runs: the configured
    /// `model_auto_compact_token_limit`, else [`AUTO_COMPACT_PERCENT`] of the model's context
    /// window (the configured `model_context_window`, else the catalogue's window for the
    /// model, else [`DEFAULT_CONTEXT_WINDOW`]). Never below 1.
    pub fn auto_compact_limit(&self) -> i64 {
        let window = self
            .model_context_window
            .or_else(|| self.model_catalog.context_window(&self.model))
            .unwrap_or(DEFAULT_CONTEXT_WINDOW);
        self.auto_compact_token_limit
            .unwrap_or(window / 100 * AUTO_COMPACT_PERCENT)
            .max(1)
    }
}

#[cfg(test)]
impl ThreadSettings {
    /// Plain settings for unit tests.
    pub(crate) fn for_tests() -> ThreadSettings {
        ThreadSettings {
            model: "gpt-5".into(),
            provider: crate::client::ProviderInfo::openai(),
            cwd: "/".into(),
            base_instructions: String::new(),
            developer_instructions: None,
            approval_policy: ApprovalPolicy::default(),
            sandbox: SandboxMode::default(),
            sandbox_writable_roots: Vec::new(),
            sandbox_network_access: false,
            protected_paths: Vec::new(),
            sandbox_isolation: Default::default(),
            shell_environment: Default::default(),
            reasoning_effort: None,
            reasoning_summary: None,
            show_raw_agent_reasoning: false,
            apply_patch_streaming_events: false,
            originator: String::new(),
            model_context_window: None,
            reasoning_summary_mode: ReasoningSummaryMode::default(),
            plan_mode: false,
            dynamic_tools: Vec::new(),
            mcp_servers: Vec::new(),
            max_sampling_requests_per_turn: 1000,
            project_doc_max_bytes: DEFAULT_PROJECT_DOC_MAX_BYTES,
            user_agents_file: None,
            model_catalog: Default::default(),
            user_skill_roots: Vec::new(),
            service_tier: None,
            skill_toggles: Vec::new(),
            include_skills_instructions: true,
            auto_compact_token_limit: None,
            compact_prompt: None,
        }
    }
}

/// The instructions sent when the configuration gives none.
pub const DEFAULT_INSTRUCTIONS: &str = include_str!("base_instructions.md");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persisted_settings_read_old_files_and_tolerate_unknown_fields() {
        let old = concat!(
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"0","created_at":0,"#,
            r#""cwd":"/","model":"m","model_provider":"p","cli_version":"0"}}"#,
            "\n",
            r#"{"timestamp":"t","type":"settings_changed","payload":{"settings":"#,
            r#"{"model":"gpt-5-mini","plan_mode":true,"a_later_field":1}}}"#,
            "\n",
            r#"{"timestamp":"t","type":"settings_changed","payload":{"settings":"#,
            r#"{"reasoning_effort":"high"}}}"#,
            "\n",
        );
        let contents =
            crate::rollout::reader::parse_rollout(std::path::Path::new("x"), old.as_bytes())
                .unwrap();
        assert_eq!(contents.meta.settings, None);
        let merged = PersistedSettings::from_rollout(&contents);
        assert_eq!(merged.model.as_deref(), Some("gpt-5-mini"));
        assert_eq!(merged.plan_mode, Some(true));
        assert_eq!(merged.reasoning_effort.as_deref(), Some("high"));
        assert_eq!(merged.dynamic_tools, None);
    }

    fn configured() -> ConfiguredSettings {
        let base = ThreadSettings::for_tests();
        ConfiguredSettings {
            model: "config-model".into(),
            provider_id: "openai".into(),
            instructions: None,
            developer_instructions: Some("config dev".into()),
            approval_policy: ApprovalPolicy::Never,
            sandbox: SandboxMode::ReadOnly,
            sandbox_writable_roots: vec!["/extra".into()],
            sandbox_network_access: true,
            protected_paths: Vec::new(),
            sandbox_isolation: Default::default(),
            shell_environment: Default::default(),
            reasoning_effort: Some("low".into()),
            reasoning_summary: None,
            show_raw_agent_reasoning: false,
            apply_patch_streaming_events: false,
            originator: "client".into(),
            model_context_window: None,
            reasoning_summary_mode: ReasoningSummaryMode::default(),
            max_sampling_requests_per_turn: 10,
            project_doc_max_bytes: 1,
            user_agents_file: None,
            model_catalog: base.model_catalog,
            user_skill_roots: Vec::new(),
            skill_toggles: Vec::new(),
            include_skills_instructions: true,
            mcp_servers: Vec::new(),
            auto_compact_token_limit: None,
            compact_prompt: None,
        }
    }

    fn resolve(
        saved: Option<SavedSettings>,
        config_names: &[&str],
        requested: SettingsOverrides,
    ) -> ThreadSettings {
        let named = |key: &str| config_names.contains(&key);
        resolve_thread_settings(
            configured(),
            saved,
            &named,
            requested,
            |id| {
                Ok::<_, String>(ProviderInfo {
                    id: id.to_string(),
                    ..ProviderInfo::openai()
                })
            },
            || Ok(PathBuf::from("/current")),
        )
        .unwrap()
    }

    #[test]
    fn settings_layers_apply_in_order_config_saved_thread_request_turn() {
        let saved = SavedSettings {
            settings: PersistedSettings {
                model: Some("saved-model".into()),
                approval_policy: Some(ApprovalPolicy::Untrusted),
                sandbox: Some(SandboxMode::WorkspaceWrite),
                reasoning_effort: Some("high".into()),
                plan_mode: Some(true),
                ..PersistedSettings::default()
            },
            model: Some("meta-model".into()),
            provider_id: Some("saved-provider".into()),
            cwd: Some("/saved".into()),
        };
        // Nothing requested: the saved layer wins over configuration, field by field.
        let resumed = resolve(Some(saved.clone()), &[], SettingsOverrides::default());
        assert_eq!(resumed.model, "saved-model");
        assert_eq!(resumed.provider.id, "saved-provider");
        assert_eq!(resumed.cwd, PathBuf::from("/saved"));
        assert_eq!(resumed.approval_policy, ApprovalPolicy::Untrusted);
        assert_eq!(resumed.reasoning_effort.as_deref(), Some("high"));
        assert_eq!(
            resumed.developer_instructions.as_deref(),
            Some("config dev")
        );
        assert!(resumed.plan_mode);
        // `workspace-write` takes the configured writable roots and network access.
        assert_eq!(
            resumed.sandbox_writable_roots,
            vec![PathBuf::from("/extra")]
        );
        assert!(resumed.sandbox_network_access);

        // A key the request's `config` object names beats the saved value.
        let named = resolve(
            Some(saved.clone()),
            &["model", "model_reasoning_effort", "sandbox_mode"],
            SettingsOverrides::default(),
        );
        assert_eq!(named.model, "config-model");
        assert_eq!(named.reasoning_effort.as_deref(), Some("low"));
        assert_eq!(named.sandbox, SandboxMode::ReadOnly);
        assert!(named.sandbox_writable_roots.is_empty());

        // Explicit params beat both.
        let mut explicit = resolve(
            Some(saved),
            &[],
            SettingsOverrides {
                model: Some("param-model".into()),
                approval_policy: Some(ApprovalPolicy::OnRequest),
                ..SettingsOverrides::default()
            },
        );
        assert_eq!(explicit.model, "param-model");
        assert_eq!(explicit.approval_policy, ApprovalPolicy::OnRequest);

        // A turn's overrides are the top layer.
        explicit.apply_overrides(SettingsOverrides {
            model: Some("turn-model".into()),
            sandbox_policy: Some((SandboxMode::ReadOnly, Vec::new(), false)),
            plan_mode: Some(false),
            ..SettingsOverrides::default()
        });
        assert_eq!(explicit.model, "turn-model");
        assert_eq!(explicit.sandbox, SandboxMode::ReadOnly);
        assert!(!explicit.plan_mode);
        assert_eq!(explicit.approval_policy, ApprovalPolicy::OnRequest);
    }

    #[test]
    fn a_new_thread_without_params_takes_the_configuration_and_the_current_dir() {
        let fresh = resolve(None, &[], SettingsOverrides::default());
        assert_eq!(fresh.model, "config-model");
        assert_eq!(fresh.provider.id, "openai");
        assert_eq!(fresh.cwd, PathBuf::from("/current"));
        assert_eq!(fresh.base_instructions, DEFAULT_INSTRUCTIONS);
        assert_eq!(fresh.sandbox, SandboxMode::ReadOnly);
        assert!(fresh.sandbox_writable_roots.is_empty());
        assert!(!fresh.plan_mode);
    }

    #[test]
    fn the_compaction_limit_is_configured_or_a_share_of_the_models_window() {
        let mut settings = ThreadSettings::for_tests();
        settings.model = "gpt-5-codex".into();
        assert_eq!(settings.auto_compact_limit(), 258_400 / 100 * 80);
        settings.model = "openai/gpt-4o".into();
        assert_eq!(settings.auto_compact_limit(), 121_600 / 100 * 80);
        settings.model = "someone-elses-model".into();
        assert_eq!(
            settings.auto_compact_limit(),
            DEFAULT_CONTEXT_WINDOW / 100 * 80
        );
        settings.model_context_window = Some(10_000);
        assert_eq!(settings.auto_compact_limit(), 8_000);
        settings.auto_compact_token_limit = Some(5_000);
        assert_eq!(settings.auto_compact_limit(), 5_000);
        settings.auto_compact_token_limit = Some(0);
        assert_eq!(settings.auto_compact_limit(), 1);
    }

    #[test]
    fn a_snapshot_round_trips_through_its_stored_form() {
        let mut settings = ThreadSettings::for_tests();
        settings.dynamic_tools = vec![DynamicToolSpec {
            name: "t".into(),
            namespace: None,
            description: "d".into(),
            input_schema: serde_json::json!({"type": "object"}),
            defer_loading: true,
        }];
        settings.plan_mode = true;
        let snapshot = settings.persisted();
        assert_eq!(
            PersistedSettings::from_value(&snapshot.to_value()),
            Some(snapshot)
        );
    }
}
