//! The domain: threads, turns, items, tools and history. Emits [`event::EventMsg`] values only.
//!
//! `core` never sees JSON-RPC: the server projects `EventMsg` into protocol notifications. It
//! drives `client/` for sampling and `rollout/` for persistence.

pub mod account;
pub mod agents;
pub mod approval;
pub(crate) mod ask;
mod background_terminals;
pub mod clock;
pub mod collaboration;
pub mod compact;
pub mod context;
pub mod error;
pub mod event;
pub mod file_search;
pub mod goal;
mod history_edit;
pub mod ids;
pub mod input;
pub mod items;
pub mod manager;
mod mcp;
pub mod models;
pub mod openai_models;
pub mod provider_models;
pub mod record;
pub mod review;
pub mod sandboxing;
pub mod settings;
pub mod shell_env;
pub mod skills;
pub(crate) mod text;
pub mod thread;
mod thread_metadata;
pub mod thread_settings;
pub mod thread_spawn;
mod tool_environment;
pub mod tool_set;
pub(crate) mod tools;
pub mod turn;
mod unsent;

/// The Responses API item a thread's history holds (`thread/inject_items` checks client items
/// into it).
pub use crate::wire::ResponseItem;
pub use background_terminals::BackgroundTerminal;
pub use clock::{now_unix_millis, now_unix_seconds};
pub use error::{CoreError, TurnError, TurnErrorKind};
pub use event::{EventMsg, TurnOutcome};
pub use ids::{InvalidThreadId, ItemId, ThreadId, TurnId};
pub use input::{LocalImageError, PreparedInput};
pub use items::{
    FileChangeEntry, FileChangeKind, MemoryCitation, MemoryCitationEntry, ToolContent,
    ToolItemStatus, TurnItem, UserInput, WebSearchAction,
};
pub use manager::ThreadManager;
pub use sandboxing::CommandSandbox;
pub use settings::{
    resolve_thread_settings, ApprovalPolicy, CollaborationOverride, ConfiguredSettings,
    DynamicToolSpec, PersistedSettings, ReasoningSummaryMode, SandboxMode, SavedSettings,
    SettingsOverrides, ThreadSettings, TurnSettingsPatch,
};
pub use thread::{StartedTurn, Thread, TurnGate, TurnOptions};
pub use thread_settings::TurnSettingsUpdate;
pub use thread_spawn::ThreadSpawn;
