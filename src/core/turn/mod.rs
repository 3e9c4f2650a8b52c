//! Turns: what one turn of a thread does, from its input to its one terminal event.
//!
//! The parts, each in its own file, depend on each other in one direction only (no file imports
//! this one or a file that imports it back):
//! - [`start`] runs the turns the thread admitted; [`turn_loop`] is the turn itself: it records
//!   the input, samples until nothing more is needed and ends exactly once ([`lifecycle`]).
//! - [`sampling`] is one request: it sends it, feeds each event of the response stream to
//!   [`response`] (which owns everything one response's events do) and drains the tools the
//!   response started.
//! - [`compaction`] swaps the history for a summary; [`review`] runs a code review in a fresh
//!   context; [`usage`] counts and reports tokens;
//!   [`request`], [`turn_error`] and [`turn_context`] are shared by the others.

mod compaction;
mod lifecycle;
mod request;
mod response;
mod review;
mod sampling;
mod start;
mod turn_context;
mod turn_error;
mod turn_loop;
mod usage;

pub(crate) use response::forget_legacy_assigned_id;
