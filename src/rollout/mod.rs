//! JSONL persistence of threads, independent of the JSON-RPC protocol.
//!
//! One file per thread under `$OPENTURN_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`.
//! Each line is one [`line::RolloutLine`]; one task owns each open file and writes each line with
//! a single `write`; fsync happens at turn boundaries. Readers tolerate a torn last line.
//! Imports only `wire/` from the crate.

pub mod archive;
pub mod delete;
mod error;
pub mod fork;
pub mod index;
mod index_entry;
mod index_repair;
pub mod line;
pub mod lock;
pub mod paths;
pub mod reader;
mod repair_state;
pub mod search;
pub mod writer;

pub use error::RolloutError;
pub use index::ThreadIndex;
pub use index_entry::IndexEntry;
pub use line::{RolloutItem, RolloutLine, SessionMeta, StoredThreadMetadata};
pub use reader::{read_rollout, RolloutContents};
pub use writer::RolloutWriter;
