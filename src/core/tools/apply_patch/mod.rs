//! `apply_patch`: the model edits files by writing a patch (see `docs/APPLY_PATCH.md`).
//!
//! [`parser`] reads the patch language (whole or streamed), [`preview`] shows a streamed patch
//! to the client, [`matcher`] finds a hunk's lines in a file, [`apply`] turns a parsed patch into
//! new file contents and writes them all or none through the sandbox's confined writer, [`gate`]
//! decides whether a patch may be written without asking; [`heredoc`] finds patches sent as
//! shell commands.

pub(crate) mod apply;
pub(crate) mod approval;
pub(crate) mod gate;
pub(crate) mod heredoc;
pub(crate) mod matcher;
pub(crate) mod parser;
pub(crate) mod preview;
pub(crate) mod tool;
pub(crate) mod turn_diff;
