//! Turns a parsed patch into new file contents ([`plan_changes`]), then writes them all or none
//! ([`commit_changes`]).
//!
//! Planning reads every touched file and matches every hunk before anything is written, so a hunk
//! that does not match changes nothing. Committing stages each new content in a temporary file
//! in its target's directory (so the final step is a same-file-system rename), renames them into
//! place, and removes deleted and moved-from files last; if any step fails, the files already
//! renamed or removed get their earlier contents back. It knows nothing of policies: the caller
//! decides which paths may be touched.

use std::io::Write;
use std::path::{Path, PathBuf};

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
                old_content: std::fs::read_to_string(&path).ok(),
                path,
                kind: PlannedKind::Add,
                new_content: Some(content.clone()),
            },
            FileOp::Delete { .. } => PlannedChange {
                display_path: op.path().to_string(),
                old_content: Some(read(&path)?),
                path,
                kind: PlannedKind::Delete,
                new_content: None,
            },
            FileOp::Update { move_to, hunks, .. } => {
                let old = read(&path)?;
                let new = apply_hunks(&old, hunks, op.path())?;
                PlannedChange {
                    display_path: op.path().to_string(),
                    path,
                    kind: PlannedKind::Update {
                        move_to: move_to.as_ref().map(|target| cwd.join(target)),
                    },
                    old_content: Some(old),
                    new_content: Some(new),
                }
            }
        };
        planned.push(change);
    }
    Ok(planned)
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

/// Writes every planned change, or none.
pub fn commit_changes(changes: &[PlannedChange]) -> Result<(), ApplyError> {
    let write_error = |path: &Path, error: std::io::Error| ApplyError::Write {
        path: path.display().to_string(),
        message: error.to_string(),
    };
    // Stage every new content first: a failure here has touched no file.
    let mut staged = Vec::new();
    for change in changes {
        let Some(content) = &change.new_content else {
            continue;
        };
        let target = change.target();
        let temp = stage(target, content).map_err(|error| write_error(target, error))?;
        let previous = if target == change.path {
            change.old_content.clone()
        } else {
            std::fs::read_to_string(target).ok()
        };
        staged.push((temp, target.to_path_buf(), previous));
    }
    // Undo records: (path, content it had before, if any).
    let mut undo: Vec<(PathBuf, Option<String>)> = Vec::new();
    for (temp, target, previous) in staged {
        if let Err(error) = temp.persist(&target) {
            restore(&undo);
            return Err(write_error(&target, error));
        }
        undo.push((target, previous));
    }
    // Deletions and moved-from files last.
    for change in changes {
        let removes = match &change.kind {
            PlannedKind::Delete => true,
            PlannedKind::Update {
                move_to: Some(target),
            } => target != &change.path,
            _ => false,
        };
        if !removes {
            continue;
        }
        if let Err(error) = std::fs::remove_file(&change.path) {
            restore(&undo);
            return Err(write_error(&change.path, error));
        }
        undo.push((change.path.clone(), change.old_content.clone()));
    }
    Ok(())
}

/// A new content written beside its target, not yet renamed into place; dropping it removes
/// the temporary file.
struct Staged {
    temp_path: PathBuf,
    persisted: bool,
}

impl Staged {
    fn persist(mut self, target: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.temp_path, target)?;
        self.persisted = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.temp_path);
        }
    }
}

/// Writes `content` to a temporary file beside `target`, creating missing directories.
fn stage(target: &Path, content: &str) -> std::io::Result<Staged> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let staged = Staged {
        temp_path: dir.join(format!(".apply_patch.{}", uuid::Uuid::new_v4().simple())),
        persisted: false,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&staged.temp_path)?;
    file.write_all(content.as_bytes())?;
    file.sync_all()?;
    // Keep the mode of the file being replaced (an executable script stays executable).
    if let Ok(metadata) = std::fs::metadata(target) {
        std::fs::set_permissions(&staged.temp_path, metadata.permissions())?;
    }
    Ok(staged)
}

/// Puts back what the undo records say, newest first; best effort, since this already runs on a
/// failure path (each failure is logged).
fn restore(undo: &[(PathBuf, Option<String>)]) {
    for (path, previous) in undo.iter().rev() {
        let result = match previous {
            Some(content) => stage(path, content).and_then(|staged| staged.persist(path)),
            None => std::fs::remove_file(path),
        };
        if let Err(error) = result {
            tracing::warn!(path = %path.display(), %error, "apply_patch rollback could not restore a file");
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
