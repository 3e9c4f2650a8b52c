//! What a thread's rollout records of its settings ([`PersistedSettings`], snapshots merged in
//! order) and what a resumed or forked thread takes from it ([`SavedSettings`]): the layer
//! between the configuration and the request's params.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::kinds::{ApprovalPolicy, DynamicToolSpec, SandboxMode};

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
    pub(super) fn yield_to_config(&mut self, named: &dyn Fn(&str) -> bool) {
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
}
