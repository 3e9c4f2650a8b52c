//! Turns a parsed patch into new file contents ([`plan_changes`]), then writes them all or none
//! ([`commit_changes`]).
//!
//! Planning reads every touched file and matches every hunk before anything is written, so a hunk
//! that does not match changes nothing. Committing first checks that every file still holds what
//! planning read, then stages each new content in a temporary file in its target's directory (so
//! the final step is a same-file-system rename), renames them into place, and removes deleted and
//! moved-from files last; if any step fails, the files already renamed or removed get their
//! earlier contents back. Every write goes through the sandbox's [`ConfinedWriter`], which the
//! caller builds from the thread's policies: this file decides what to write, never where it may.
//! Both steps block on the file system; the tool runs them off the async threads.

use std::path::{Path, PathBuf};

use crate::sandbox::{ConfinedWriter, WriteError};

use super::matcher::find_lines;
use super::parser::{FileOp, Hunk, Patch};

/// What one file section does, with the contents before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// The path as the patch wrote it.
    pub display_path: String,
    /// Absolute.
    pub path: PathBuf,
    pub kind: PlannedKind,
    /// `None` for a file that does not exist yet.
    pub old_content: Option<String>,
    /// `None` for a deleted file.
    pub new_content: Option<String>,
    /// For a move: what the move's target held before (`None`: nothing there).
    pub target_before: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedKind {
    Add,
    Delete,
    Update { move_to: Option<PathBuf> },
}

impl PlannedChange {
    /// Where the new content goes.
    pub fn target(&self) -> &Path {
        match &self.kind {
            PlannedKind::Update {
                move_to: Some(target),
            } => target,
            _ => &self.path,
        }
    }

    /// Whether the new content goes to another path (the old one is then removed).
    pub fn moves(&self) -> bool {
        self.target() != self.path
    }
}

/// Why a patch could not be applied; the text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: hunk {hunk}{context} did not match the file; expected these lines (no file was changed):\n{expected}")]
    HunkMismatch {
        path: String,
        /// Counts from 1.
        hunk: usize,
        /// ` (after "@@ header")` when the hunk had a header.
        context: String,
        expected: String,
    },
    #[error(
        "{path}: the context line {context:?} of hunk {hunk} was not found (no file was changed)"
    )]
    ContextNotFound {
        path: String,
        hunk: usize,
        context: String,
    },
    #[error("{path} is named twice in the patch")]
    Duplicate { path: String },
    #[error("cannot write {path}: {message} (every file was left as it was)")]
    Write { path: String, message: String },
    #[error("the file work stopped unexpectedly ({0}); files may be partly written")]
    Crashed(String),
    #[error("{path} changed after the patch was read (edited while the patch waited for approval, or by another program), so no file was changed: read it again and write the patch against what it holds now")]
    ChangedMeanwhile { path: String },
}

/// Reads and matches everything the patch touches; nothing is written.
pub fn plan_changes(patch: &Patch, cwd: &Path) -> Result<Vec<PlannedChange>, ApplyError> {
    let mut planned: Vec<PlannedChange> = Vec::new();
    for op in &patch.files {
        let path = cwd.join(op.path());
        if planned.iter().any(|change| change.path == path) {
            return Err(ApplyError::Duplicate {
                path: op.path().to_string(),
            });
        }
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|error| ApplyError::Read {
                path: op.path().to_string(),
                message: error.to_string(),
            })
        };
        let change = match op {
            FileOp::Add { content, .. } => PlannedChange {
                display_path: op.path().to_string(),
                old_content: read_if_any(&path),
                path,
                kind: PlannedKind::Add,
                new_content: Some(content.clone()),
                target_before: None,
            },
            FileOp::Delete { .. } => PlannedChange {
                display_path: op.path().to_string(),
                old_content: Some(read(&path)?),
                path,
                kind: PlannedKind::Delete,
                new_content: None,
                target_before: None,
            },
            FileOp::Update { move_to, hunks, .. } => {
                let old = read(&path)?;
                let new = apply_hunks(&old, hunks, op.path())?;
                let move_to = move_to.as_ref().map(|target| cwd.join(target));
                PlannedChange {
                    display_path: op.path().to_string(),
                    target_before: move_to.as_deref().and_then(read_if_any),
                    path,
                    kind: PlannedKind::Update { move_to },
                    old_content: Some(old),
                    new_content: Some(new),
                }
            }
        };
        planned.push(change);
    }
    Ok(planned)
}

/// What a file that may or may not exist holds (read as text, whatever its bytes), as the
/// check before writing reads it again.
fn read_if_any(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// The new content of a file after its hunks, in order.
pub fn apply_hunks(old: &str, hunks: &[Hunk], path: &str) -> Result<String, ApplyError> {
    let mut lines: Vec<String> = old.split('\n').map(str::to_string).collect();
    // A final newline leaves an empty last element that is not a line.
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut cursor = 0;
    for (index, hunk) in hunks.iter().enumerate() {
        if let Some(context) = &hunk.context {
            match find_lines(&lines, &[context.as_str()], cursor, false) {
                Some(found) => cursor = found + 1,
                None => {
                    return Err(ApplyError::ContextNotFound {
                        path: path.to_string(),
                        hunk: index + 1,
                        context: context.clone(),
                    })
                }
            }
        }
        let mut old_lines = hunk.old_lines();
        let mut new_lines = hunk.new_lines();
        if old_lines.is_empty() {
            // Pure addition: at the end of the file.
            replacements.push((lines.len(), 0, to_owned(&new_lines)));
            continue;
        }
        let mut found = find_lines(&lines, &old_lines, cursor, hunk.end_of_file);
        // A trailing empty context line often stands for the end of the file.
        if found.is_none() && old_lines.last() == Some(&"") {
            old_lines.pop();
            if new_lines.last() == Some(&"") {
                new_lines.pop();
            }
            found = find_lines(&lines, &old_lines, cursor, hunk.end_of_file);
        }
        let Some(at) = found else {
            return Err(ApplyError::HunkMismatch {
                path: path.to_string(),
                hunk: index + 1,
                context: hunk
                    .context
                    .as_ref()
                    .map(|context| format!(" (after \"@@ {context}\")"))
                    .unwrap_or_default(),
                expected: hunk.old_lines().join("\n"),
            });
        };
        replacements.push((at, old_lines.len(), to_owned(&new_lines)));
        cursor = at + old_lines.len();
    }
    // Back to front, so earlier indices stay valid.
    replacements.sort_by_key(|(at, _, _)| *at);
    for (at, removed, added) in replacements.into_iter().rev() {
        lines.splice(at..at + removed, added);
    }
    let mut new = lines.join("\n");
    new.push('\n');
    Ok(new)
}

fn to_owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|line| line.to_string()).collect()
}

/// Writes every planned change through `writer`, or none.
///
/// First every touched file must still hold what planning read: an edit made since (while the
/// user was asked, or by a command running beside the patch) fails the patch instead of being
/// overwritten with the old read. Then each new content is staged beside its target, all are
/// renamed into place, and deleted and moved-from files are removed last; a failure part-way
/// puts back what was already replaced or removed.
pub fn commit_changes(
    changes: &[PlannedChange],
    writer: &ConfinedWriter,
) -> Result<(), ApplyError> {
    for change in changes {
        unchanged_since_read(writer, &change.path, change.old_content.as_deref())?;
        if change.moves() {
            unchanged_since_read(writer, change.target(), change.target_before.as_deref())?;
        }
    }
    // Stage every new content first: a failure here has touched no file.
    let mut staged = Vec::new();
    for change in changes {
        let Some(content) = &change.new_content else {
            continue;
        };
        let target = change.target();
        let write = writer
            .stage(target, content.as_bytes())
            .map_err(|error| not_written(target, error))?;
        let previous = if change.moves() {
            change.target_before.clone()
        } else {
            change.old_content.clone()
        };
        staged.push((write, target.to_path_buf(), previous));
    }
    // Undo records: (path, content it had before, if any).
    let mut undo: Vec<(PathBuf, Option<String>)> = Vec::new();
    for (write, target, previous) in staged {
        if let Err(error) = write.commit() {
            restore(writer, &undo);
            return Err(not_written(&target, error));
        }
        undo.push((target, previous));
    }
    // Deletions and moved-from files last.
    for change in changes {
        if !matches!(change.kind, PlannedKind::Delete) && !change.moves() {
            continue;
        }
        if let Err(error) = writer.remove(&change.path) {
            restore(writer, &undo);
            return Err(not_written(&change.path, error));
        }
        undo.push((change.path.clone(), change.old_content.clone()));
    }
    Ok(())
}

/// Fails when `path` no longer holds `expected` (`None`: it must not exist).
fn unchanged_since_read(
    writer: &ConfinedWriter,
    path: &Path,
    expected: Option<&str>,
) -> Result<(), ApplyError> {
    let now = writer
        .read(path)
        .map_err(|error| not_written(path, error))?;
    let now = now.as_deref().map(String::from_utf8_lossy);
    if now.as_deref() == expected {
        return Ok(());
    }
    Err(ApplyError::ChangedMeanwhile {
        path: path.display().to_string(),
    })
}

fn not_written(path: &Path, error: WriteError) -> ApplyError {
    let message = match error {
        WriteError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    };
    ApplyError::Write {
        path: path.display().to_string(),
        message,
    }
}

/// Puts back what the undo records say, newest first; best effort, since this already runs on a
/// failure path (each failure is logged).
fn restore(writer: &ConfinedWriter, undo: &[(PathBuf, Option<String>)]) {
    for (path, previous) in undo.iter().rev() {
        let result = match previous {
            Some(content) => writer
                .stage(path, content.as_bytes())
                .and_then(|staged| staged.commit()),
            None => writer.remove(path),
        };
        if let Err(error) = result {
            tracing::warn!(path = %path.display(), %error, "apply_patch rollback could not restore a file");
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
