//! Compaction, the pure part: how big a request is, what a compacted history holds, and the
//! texts the model is given. The turn side (the summarization request, swapping the history,
//! recording it) lives in `core/turn/compaction.rs`; nothing here does I/O or knows a turn.
//!
//! A compacted history is: the thread's context messages (project docs, environment), then the
//! user's own messages, newest first up to a budget and put back in order, then one user
//! message carrying the summary. Everything else — assistant messages, reasoning, tool calls and
//! their outputs, older summaries — is dropped, since the summary stands for it.

pub mod estimate;
pub mod history;
pub mod prompt;

pub use estimate::{estimate_items, estimate_request, estimate_since_last_output};
pub use history::{replacement_history, summarization_input, KeptBudget};
