//! Per-thread settings that turns read and `turn/start` overrides change.

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
    pub reasoning_effort: Option<String>,
    pub reasoning_summary: Option<String>,
    pub show_raw_agent_reasoning: bool,
    /// The client's name, sent upstream as `originator`.
    pub originator: String,
    pub model_context_window: Option<i64>,
    /// `reasoning_summary_mode` in config.toml.
    pub reasoning_summary_mode: ReasoningSummaryMode,
    /// Plan mode (`collaborationMode: {"mode": "plan"}` on `turn/start`): `<proposed_plan>` blocks
    /// become a plan item.
    pub plan_mode: bool,
    pub dynamic_tools: Vec<DynamicToolSpec>,
    /// `max_sampling_requests_per_turn` in config.toml: the requests one turn may send before
    /// it fails, so a model that keeps calling tools cannot loop forever.
    pub max_sampling_requests_per_turn: u32,
    /// `project_doc_max_bytes` in config.toml: how much of the `AGENTS.md` files the model gets.
    pub project_doc_max_bytes: usize,
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

/// The usable context window of a model the configuration says nothing about: 95% of 272000,
/// the rest left for the model's own overhead (docs/PROTOCOL.md §10).
pub const DEFAULT_CONTEXT_WINDOW: i64 = 272_000 * 95 / 100;

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

    /// The context window reported with token usage: `model_context_window` from the
    /// configuration, else [`DEFAULT_CONTEXT_WINDOW`].
    pub fn context_window(&self) -> i64 {
        self.model_context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW)
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
            reasoning_effort: None,
            reasoning_summary: None,
            show_raw_agent_reasoning: false,
            originator: String::new(),
            model_context_window: None,
            reasoning_summary_mode: ReasoningSummaryMode::default(),
            plan_mode: false,
            dynamic_tools: Vec::new(),
            max_sampling_requests_per_turn: 1000,
            project_doc_max_bytes: super::context::DEFAULT_PROJECT_DOC_MAX_BYTES,
            model_catalog: Default::default(),
            user_skill_roots: Vec::new(),
            service_tier: None,
            skill_toggles: Vec::new(),
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
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(contents.meta.settings, None);
        let merged = PersistedSettings::from_rollout(&contents);
        assert_eq!(merged.model.as_deref(), Some("gpt-5-mini"));
        assert_eq!(merged.plan_mode, Some(true));
        assert_eq!(merged.reasoning_effort.as_deref(), Some("high"));
        assert_eq!(merged.dynamic_tools, None);
    }

    #[test]
    fn a_snapshot_round_trips_through_its_stored_form() {
        let mut settings = ThreadSettings::for_tests();
        settings.dynamic_tools = vec![DynamicToolSpec {
            name: "t".into(),
            namespace: None,
            description: "d".into(),
            input_schema: serde_json::json!({"type": "object"}),
        }];
        settings.plan_mode = true;
        let snapshot = settings.persisted();
        assert_eq!(
            PersistedSettings::from_value(&snapshot.to_value()),
            Some(snapshot)
        );
    }
}
