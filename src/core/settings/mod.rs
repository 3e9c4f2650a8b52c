//! Per-thread settings that turns read and `turn/start` overrides change, and the one place
//! their precedence is decided ([`resolve_thread_settings`], [`ThreadSettings::apply_overrides`]):
//! configuration, then what the thread's rollout recorded, then the `thread/start` (resume,
//! fork) params, then `turn/start` overrides — later wins (docs/PROTOCOL.md §5.1). The server
//! only converts protocol params into [`SettingsOverrides`].

mod kinds;
mod layers;
mod overrides;
mod persisted;
mod thread;

pub use kinds::{
    ApprovalPolicy, DynamicToolSpec, ReasoningSummaryMode, SandboxMode, AUTO_COMPACT_PERCENT,
    DEFAULT_CONTEXT_WINDOW, DEFAULT_INSTRUCTIONS, DEFAULT_PROJECT_DOC_MAX_BYTES,
};
pub use layers::{resolve_thread_settings, ConfiguredSettings};
pub use overrides::{CollaborationOverride, SettingsOverrides};
pub use persisted::{PersistedSettings, SavedSettings};
pub use thread::{ThreadSettings, TurnSettingsPatch};
