//! A thread's goal: an objective the thread keeps working toward across turns, on its own,
//! until the model reports it complete, its token budget runs out, a turn fails, or the work
//! stops moving. `model.rs` owns the goal's data and every rule that changes it (pure: no I/O,
//! no clock, no thread); `thread_goal.rs` applies the rules to a live thread, persists and
//! announces the result; `prompt.rs` writes what the model is told; the automatic turns are
//! started by `turn/start.rs` and accounted by `turn/turn_loop.rs`; the model's goal tools
//! are `tools/goal.rs`.
//!
//! The continuation is bounded twice (docs/PROTOCOL.md, "Goals"): by the goal's token budget,
//! and by [`MAX_TURNS_WITHOUT_PROGRESS`] automatic turns in a row that called no tool.

pub mod model;
pub(crate) mod prompt;
mod thread_goal;

pub use model::{Goal, GoalError, GoalRequest, GoalStatus, MAX_TURNS_WITHOUT_PROGRESS};
