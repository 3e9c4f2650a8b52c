//! What a request names of a thread's settings: `thread/start` (resume, fork) params and
//! `turn/start` or `thread/settings/update` overrides, converted by the server.

use std::path::PathBuf;

use super::kinds::{ApprovalPolicy, DynamicToolSpec, SandboxMode};

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
