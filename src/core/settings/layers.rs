//! The layers of a thread's settings and the one place their precedence is decided:
//! [`ConfiguredSettings`] (the lowest), then what the rollout saved, then the thread request's
//! [`SettingsOverrides`] ([`resolve_thread_settings`]).

use std::path::PathBuf;

use crate::client::ProviderInfo;

use super::kinds::{ApprovalPolicy, ReasoningSummaryMode, SandboxMode, DEFAULT_INSTRUCTIONS};
use super::overrides::SettingsOverrides;
use super::persisted::SavedSettings;
use super::thread::ThreadSettings;

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
    pub shell_environment: std::sync::Arc<crate::core::shell_env::ShellEnvironmentPolicy>,
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
    pub model_catalog: std::sync::Arc<crate::core::models::ModelCatalog>,
    pub user_skill_roots: Vec<PathBuf>,
    pub skill_toggles: Vec<crate::core::skills::SkillToggle>,
    pub include_skills_instructions: bool,
    /// `[mcp_servers.NAME]`, with a thread request's `config` already applied.
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
    pub auto_compact_token_limit: Option<i64>,
    pub compact_prompt: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::super::persisted::PersistedSettings;
    use super::*;

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
}
