//! `apply_patch`: the model edits files by writing a patch (see `docs/APPLY_PATCH.md`).
//!
//! [`parser`] reads the patch language (whole or streamed), [`matcher`] finds a hunk's lines in a
//! file, [`apply`] turns a parsed patch into new file contents and writes them all or none;
//! [`heredoc`] finds patches sent as shell commands.

pub(crate) mod apply;
pub(crate) mod approval;
pub(crate) mod heredoc;
pub(crate) mod matcher;
pub(crate) mod parser;
pub(crate) mod tool;
pub(crate) mod turn_diff;
