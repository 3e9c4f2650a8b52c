//! The checks behind each fuzz target, as plain functions of the input bytes. They panic on a
//! broken invariant, which is what libFuzzer reports. The main crate's stable test
//! (`tests/fuzz_targets_on_stable.rs`) includes the files of this folder by path and runs the
//! same checks on generated inputs, so this file may only use `openturn`, `futures`, `tokio`
//! and `serde_json`.

mod checks;

pub use checks::{jsonrpc_line, rollout_reader};
