//! What a thread's turns run with ([`ThreadSettings`]), how a turn's overrides and a running
//! turn's patch change it, and the snapshot of it the rollout keeps.

use std::path::PathBuf;

use crate::client::ProviderInfo;

use super::kinds::{
    ApprovalPolicy, DynamicToolSpec, ReasoningSummaryMode, SandboxMode, AUTO_COMPACT_PERCENT,
    DEFAULT_CONTEXT_WINDOW,
};
use super::overrides::SettingsOverrides;
use super::persisted::PersistedSettings;

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
    pub shell_environment: std::sync::Arc<crate::core::shell_env::ShellEnvironmentPolicy>,
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
    pub model_catalog: std::sync::Arc<crate::core::models::ModelCatalog>,
    /// Folders searched for user skills (`$OPENTURN_HOME/skills` and a client's extra roots);
    /// each turn names the skills found there and in the project to the model.
    pub user_skill_roots: Vec<PathBuf>,
    /// The thread's service tier (`thread/start` or a `turn/start`'s `serviceTier`), as sent
    /// upstream; `None` leaves the provider's default.
    pub service_tier: Option<String>,
    /// `[[skills.config]]` entries: skills turned off here are not named to the model.
    pub skill_toggles: Vec<crate::core::skills::SkillToggle>,
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
            project_doc_max_bytes: super::kinds::DEFAULT_PROJECT_DOC_MAX_BYTES,
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

#[cfg(test)]
mod tests {
    use super::*;

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
