//! The `apply_patch` tool as the model sees it and as a turn runs it: the two definitions
//! (freeform with a grammar, or a JSON function with one `input` string), the policy gate, the
//! `fileChange` item and the answer the model reads.

use std::path::{Component, Path};

use serde_json::{json, Value};

use super::super::super::event::EventMsg;
use super::super::super::items::{FileChangeEntry, FileChangeKind, ToolItemStatus, TurnItem};
use super::super::super::settings::{ApprovalPolicy, SandboxMode, ThreadSettings};
use super::super::super::turn::{persist_turn_item, TurnContext};
use super::super::ToolOutput;
use super::apply::{commit_changes, plan_changes, PlannedChange, PlannedKind};
use super::parser::{parse_patch, FileOp, HunkLine, Patch};

pub(crate) const TOOL_NAME: &str = "apply_patch";

const GRAMMAR: &str = include_str!("grammar.lark");

const DESCRIPTION: &str = "Edit files by writing a patch. The patch starts with `*** Begin Patch` \
and ends with `*** End Patch`. Between them, one section per file: `*** Add File: <path>` followed \
by the new file's lines, each prefixed with `+`; `*** Delete File: <path>`; or `*** Update File: \
<path>`, optionally followed by `*** Move to: <new path>`, then hunks. A hunk starts with `@@` \
(optionally followed by a line that appears before the change, such as a function signature, to \
locate it) and lists lines prefixed with ` ` (unchanged context, about three lines before and \
after), `-` (removed) or `+` (added); `*** End of File` after a hunk anchors it at the end of the \
file. Paths are relative to the working directory. Either every file changes or none does.";

/// How the tool is offered: models that take custom tools get the freeform definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyPatchForm {
    Freeform,
    Function,
}

pub(crate) fn spec(form: ApplyPatchForm) -> Value {
    match form {
        ApplyPatchForm::Freeform => json!({
            "type": "custom",
            "name": TOOL_NAME,
            "description": DESCRIPTION,
            "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR},
        }),
        ApplyPatchForm::Function => json!({
            "type": "function",
            "name": TOOL_NAME,
            "description": DESCRIPTION,
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {"input": {"type": "string", "description": "The whole patch, from `*** Begin Patch` to `*** End Patch`."}},
                "required": ["input"],
                "additionalProperties": false
            }
        }),
    }
}

/// The `input` of the function form.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct FunctionArgs {
    pub input: String,
}

/// What happens to a patch before it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Gate {
    Apply,
    Ask,
    Refuse(String),
}

fn gate(settings: &ThreadSettings, changes: &[PlannedChange]) -> Gate {
    let policy = settings.approval_policy;
    match settings.sandbox {
        SandboxMode::DangerFullAccess if policy == ApprovalPolicy::Untrusted => Gate::Ask,
        SandboxMode::DangerFullAccess => Gate::Apply,
        SandboxMode::ReadOnly if policy == ApprovalPolicy::Never => Gate::Refuse(
            "refused: this thread's sandbox is read-only and the approval policy is `never`, so \
             no file may be written and the user cannot be asked. No file was changed."
                .to_string(),
        ),
        SandboxMode::ReadOnly => Gate::Ask,
        SandboxMode::WorkspaceWrite => {
            for change in changes {
                for path in [Some(change.path.as_path()), moved_to(change)]
                    .into_iter()
                    .flatten()
                {
                    if let Err(reason) = check_inside_workspace(&settings.cwd, path) {
                        return Gate::Refuse(format!(
                            "refused: {reason}; this thread's sandbox is workspace-write, which \
                             allows writes only inside {} (and never in `.git`). No file was changed.",
                            settings.cwd.display()
                        ));
                    }
                }
            }
            if policy == ApprovalPolicy::Never {
                Gate::Apply
            } else {
                Gate::Ask
            }
        }
    }
}

fn moved_to(change: &PlannedChange) -> Option<&Path> {
    match &change.kind {
        PlannedKind::Update { move_to } => move_to.as_deref(),
        _ => None,
    }
}

/// `path` (absolute) stays inside `cwd` once `..` and symbolic links are resolved, and is not
/// in a `.git` directory.
fn check_inside_workspace(cwd: &Path, path: &Path) -> Result<(), String> {
    let root = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    // `..` first, lexically; then the longest existing ancestor is resolved (links included)
    // and the rest added back.
    let mut lexical = std::path::PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical;
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break existing,
        }
    };
    let mut full = resolved;
    for name in rest.into_iter().rev() {
        match Path::new(&name).components().next() {
            Some(Component::ParentDir) => {
                full.pop();
            }
            Some(Component::Normal(_)) => full.push(name),
            _ => {}
        }
    }
    if !full.starts_with(&root) {
        return Err(format!("{} is outside the workspace", path.display()));
    }
    if full
        .strip_prefix(&root)
        .is_ok_and(|inside| inside.components().any(|c| c.as_os_str() == ".git"))
    {
        return Err(format!("{} is inside `.git`", path.display()));
    }
    Ok(())
}

/// The item's view of the changes, each with its unified diff.
pub(crate) fn entries(changes: &[PlannedChange]) -> Vec<FileChangeEntry> {
    changes
        .iter()
        .map(|change| FileChangeEntry {
            path: change.path.display().to_string(),
            kind: match &change.kind {
                PlannedKind::Add => FileChangeKind::Add,
                PlannedKind::Delete => FileChangeKind::Delete,
                PlannedKind::Update { move_to } => FileChangeKind::Update {
                    move_path: move_to.as_ref().map(|target| target.display().to_string()),
                },
            },
            diff: unified_diff(
                change.old_content.as_deref().unwrap_or(""),
                change.new_content.as_deref().unwrap_or(""),
            ),
        })
        .collect()
}

/// The hunks of a unified diff, without file headers.
pub(crate) fn unified_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .to_string()
}

/// The item's view of a patch that could not be planned: its files, without diffs.
fn entries_of_patch(patch: &Patch, cwd: &Path) -> Vec<FileChangeEntry> {
    patch
        .files
        .iter()
        .map(|op| FileChangeEntry {
            path: cwd.join(op.path()).display().to_string(),
            kind: match op {
                FileOp::Add { .. } => FileChangeKind::Add,
                FileOp::Delete { .. } => FileChangeKind::Delete,
                FileOp::Update { move_to, .. } => FileChangeKind::Update {
                    move_path: move_to
                        .as_ref()
                        .map(|target| cwd.join(target).display().to_string()),
                },
            },
            diff: String::new(),
        })
        .collect()
}

/// The client's view of a patch still being written: each file with its hunks as written.
pub(crate) fn streamed_entries(patch: &Patch, cwd: &Path) -> Vec<FileChangeEntry> {
    let mut entries = entries_of_patch(patch, cwd);
    for (entry, op) in entries.iter_mut().zip(&patch.files) {
        entry.diff = match op {
            FileOp::Add { content, .. } => {
                content.lines().map(|line| format!("+{line}\n")).collect()
            }
            FileOp::Delete { .. } => String::new(),
            FileOp::Update { hunks, .. } => hunks
                .iter()
                .map(|hunk| {
                    let mut text = match &hunk.context {
                        Some(context) => format!("@@ {context}\n"),
                        None => "@@\n".to_string(),
                    };
                    for line in &hunk.lines {
                        let (prefix, body) = match line {
                            HunkLine::Context(body) => (' ', body),
                            HunkLine::Remove(body) => ('-', body),
                            HunkLine::Add(body) => ('+', body),
                        };
                        text.push(prefix);
                        text.push_str(body);
                        text.push('\n');
                    }
                    text
                })
                .collect(),
        };
    }
    entries
}

async fn emit_item(turn: &TurnContext, item: TurnItem, completed: bool) {
    let turn_id = turn.turn_id.clone();
    if completed {
        persist_turn_item(turn, &item).await;
        turn.emit(EventMsg::ItemCompleted { turn_id, item }).await;
    } else {
        turn.emit(EventMsg::ItemStarted { turn_id, item }).await;
    }
}

/// Runs one `apply_patch` call. `None` when the turn ended while waiting for the user.
pub(crate) async fn run(
    turn: &TurnContext,
    call_id: String,
    custom: bool,
    input: &str,
) -> Option<ToolOutput> {
    let output = |text: String| ToolOutput {
        call_id: call_id.clone(),
        custom,
        text,
    };
    let settings = turn.thread.settings();
    let patch = match parse_patch(input) {
        Ok(patch) => patch,
        Err(error) => return Some(output(format!("apply_patch failed: {error}"))),
    };
    let item = |changes: Vec<FileChangeEntry>, status| TurnItem::FileChange {
        id: call_id.clone(),
        changes,
        status,
    };
    let planned = match plan_changes(&patch, &settings.cwd) {
        Ok(planned) => planned,
        Err(error) => {
            let changes = entries_of_patch(&patch, &settings.cwd);
            emit_item(
                turn,
                item(changes.clone(), ToolItemStatus::InProgress),
                false,
            )
            .await;
            emit_item(turn, item(changes, ToolItemStatus::Failed), true).await;
            return Some(output(format!("apply_patch failed: {error}")));
        }
    };
    let changes = entries(&planned);
    emit_item(
        turn,
        item(changes.clone(), ToolItemStatus::InProgress),
        false,
    )
    .await;
    match gate(&settings, &planned) {
        Gate::Apply => {}
        Gate::Refuse(text) => {
            emit_item(turn, item(changes, ToolItemStatus::Declined), true).await;
            return Some(output(text));
        }
        Gate::Ask => {
            if let Some(refusal) = super::approval::ask(turn, &call_id).await? {
                emit_item(turn, item(changes, ToolItemStatus::Declined), true).await;
                return Some(output(refusal));
            }
        }
    }
    if let Ok(mut snapshots) = turn.file_snapshots.lock() {
        snapshots.record(&planned);
    }
    match commit_changes(&planned) {
        Ok(()) => {
            emit_item(turn, item(changes, ToolItemStatus::Completed), true).await;
            let diff = match turn.file_snapshots.lock() {
                Ok(snapshots) => snapshots.diff(&settings.cwd),
                Err(_) => String::new(),
            };
            turn.emit(EventMsg::TurnDiff {
                turn_id: turn.turn_id.clone(),
                diff,
            })
            .await;
            Some(output(success_text(&planned)))
        }
        Err(error) => {
            emit_item(turn, item(changes, ToolItemStatus::Failed), true).await;
            Some(output(format!("apply_patch failed: {error}")))
        }
    }
}

fn success_text(planned: &[PlannedChange]) -> String {
    let mut text = String::from("Success. Updated the following files:\n");
    for change in planned {
        let letter = match change.kind {
            PlannedKind::Add => 'A',
            PlannedKind::Delete => 'D',
            PlannedKind::Update { .. } => 'M',
        };
        text.push_str(&format!("{letter} {}\n", change.display_path));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_escaping_the_workspace_or_into_git_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cwd = dir.path();
        std::os::unix::fs::symlink(outside.path(), cwd.join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_inside_workspace(cwd, &cwd.join("a/b.txt")), Ok(()));
        assert_eq!(check_inside_workspace(cwd, &cwd.join("a/../b.txt")), Ok(()));
        for bad in [
            "../x.txt",
            "a/../../x.txt",
            "link/x.txt",
            ".git/config",
            "/etc/passwd",
        ] {
            assert!(
                check_inside_workspace(cwd, &cwd.join(bad)).is_err(),
                "{bad}"
            );
        }
    }
}

/// The patch of a shell command that is nothing but an `apply_patch` heredoc
/// (`apply_patch <<'EOF'` … `EOF`), which models also send to `exec_command`; such a command is
/// applied as a patch instead of running a process.
pub(crate) fn heredoc_patch(cmd: &str) -> Option<String> {
    let cmd = cmd.trim();
    let (first, rest) = cmd.split_once('\n')?;
    let redirect = first.trim().strip_prefix("apply_patch")?.trim_start();
    let terminator = redirect
        .strip_prefix("<<")?
        .trim_start_matches('-')
        .trim()
        .trim_matches(|c| c == '\'' || c == '"');
    if terminator.is_empty()
        || !terminator
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let body = rest.strip_suffix(terminator)?;
    if !(body.is_empty() || body.ends_with('\n')) {
        return None;
    }
    Some(body.to_string())
}

#[cfg(test)]
mod heredoc_tests {
    use super::heredoc_patch;

    #[test]
    fn only_a_whole_apply_patch_heredoc_is_taken_for_a_patch() {
        let patch = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        assert_eq!(
            heredoc_patch(&format!("apply_patch <<'EOF'\n{patch}EOF")).as_deref(),
            Some(patch)
        );
        assert_eq!(
            heredoc_patch(&format!("apply_patch <<PATCH\n{patch}PATCH\n")).as_deref(),
            Some(patch)
        );
        assert_eq!(
            heredoc_patch(&format!("apply_patch <<'EOF'\n{patch}EOF\nrm -rf x")),
            None
        );
        assert_eq!(heredoc_patch(&format!("cat <<'EOF'\n{patch}EOF")), None);
        assert_eq!(heredoc_patch("apply_patch"), None);
    }
}
