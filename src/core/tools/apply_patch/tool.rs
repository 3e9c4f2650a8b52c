//! The `apply_patch` tool as the model sees it and as a turn runs it: the two definitions
//! (freeform with a grammar, or a JSON function with one `input` string), the policy gate, the
//! `fileChange` item and the answer the model reads.

use std::path::Path;

use serde_json::{json, Value};

use super::super::super::event::EventMsg;
use super::super::super::ids::ItemId;
use super::super::super::items::{FileChangeEntry, FileChangeKind, ToolItemStatus, TurnItem};
use super::super::super::models::ApplyPatchForm;
use super::super::handle::TurnHandle;
use super::super::output::ToolOutput;
use super::apply::{commit_changes, plan_changes, ApplyError, PlannedChange, PlannedKind};
use super::gate::{approved_writer, gate, writable_area, Gate};
use super::parser::{parse_patch, FileOp, Patch};

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

/// The item's view of the changes, each with its unified diff.
pub(crate) fn entries(changes: &[PlannedChange]) -> Vec<FileChangeEntry> {
    let mut entries: Vec<FileChangeEntry> = changes
        .iter()
        .map(|change| {
            let old = change.old_content.as_deref().unwrap_or("");
            let new = change.new_content.as_deref().unwrap_or("");
            let (kind, diff) = match &change.kind {
                // As the reference shows them: an added file's diff is its content, a deleted
                // file's diff what it held (clients such as the ACP bridge read them so).
                PlannedKind::Add => (FileChangeKind::Add, new.to_string()),
                PlannedKind::Delete => (FileChangeKind::Delete, old.to_string()),
                PlannedKind::Update { move_to } => (
                    FileChangeKind::Update {
                        move_path: move_to.as_ref().map(|target| target.display().to_string()),
                    },
                    unified_diff(old, new),
                ),
            };
            FileChangeEntry {
                path: change.path.display().to_string(),
                kind,
                diff,
            }
        })
        .collect();
    sort_by_path(&mut entries);
    entries
}

/// The reference lists a patch's files by path, whatever order the patch had.
pub(super) fn sort_by_path(entries: &mut [FileChangeEntry]) {
    entries.sort_by(|a, b| a.path.cmp(&b.path));
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
    let mut entries: Vec<FileChangeEntry> = patch
        .files
        .iter()
        .map(|op| FileChangeEntry {
            path: cwd.join(op.path()).display().to_string(),
            kind: op_kind(op, |target| cwd.join(target).display().to_string()),
            diff: String::new(),
        })
        .collect();
    sort_by_path(&mut entries);
    entries
}

pub(super) fn op_kind(op: &FileOp, path: impl Fn(&str) -> String) -> FileChangeKind {
    match op {
        FileOp::Add { .. } => FileChangeKind::Add,
        FileOp::Delete { .. } => FileChangeKind::Delete,
        FileOp::Update { move_to, .. } => FileChangeKind::Update {
            move_path: move_to.as_deref().map(path),
        },
    }
}

async fn emit_item(turn: &TurnHandle, item: TurnItem, completed: bool) {
    if completed {
        turn.item_completed(item).await;
    } else {
        turn.item_started(item).await;
    }
}

/// Runs one `apply_patch` call whose paths are relative to `dir` (a heredoc's `cd` or
/// `workdir`; the thread's cwd when `None`). `None` when the turn ended while waiting for the
/// user. The item of a streamed patch started when its input began (the previews belong to
/// it); any other item starts here. Either way it completes here, whatever happens.
pub(crate) async fn run(
    turn: &TurnHandle,
    call_id: ItemId,
    custom: bool,
    input: &str,
    dir: Option<&Path>,
) -> Option<ToolOutput> {
    let output = |text: String| ToolOutput {
        call_id: call_id.clone(),
        custom,
        text,
    };
    let item = |changes: Vec<FileChangeEntry>, status| TurnItem::FileChange {
        id: call_id.clone(),
        changes,
        status,
    };
    let started = turn.item_is_open(&call_id);
    let settings = turn.env.settings();
    let patch = match parse_patch(input) {
        Ok(patch) => patch,
        Err(error) => {
            if started {
                emit_item(turn, item(Vec::new(), ToolItemStatus::Failed), true).await;
            }
            return Some(output(format!("apply_patch failed: {error}")));
        }
    };
    let base = match dir {
        Some(dir) => settings.cwd.join(dir),
        None => settings.cwd.clone(),
    };
    let planning = {
        let (patch, base) = (patch.clone(), base.clone());
        off_thread(move || plan_changes(&patch, &base)).await
    };
    let planned = match planning {
        Ok(planned) => planned,
        Err(error) => {
            let changes = entries_of_patch(&patch, &base);
            if !started {
                emit_item(
                    turn,
                    item(changes.clone(), ToolItemStatus::InProgress),
                    false,
                )
                .await;
            }
            emit_item(turn, item(changes, ToolItemStatus::Failed), true).await;
            return Some(output(format!("apply_patch failed: {error}")));
        }
    };
    let changes = entries(&planned);
    if !started {
        emit_item(
            turn,
            item(changes.clone(), ToolItemStatus::InProgress),
            false,
        )
        .await;
    }
    let area = writable_area(&settings);
    let area = area.as_ref().map_err(String::as_str);
    let (decision, outside) = gate(&settings, area, &planned);
    let allowed_outside = match decision {
        Gate::Apply => Vec::new(),
        Gate::Refuse(text) => {
            emit_item(turn, item(changes, ToolItemStatus::Declined), true).await;
            return Some(output(text));
        }
        Gate::Ask => {
            let Some(answer) = super::approval::ask(turn, &call_id).await else {
                emit_item(turn, item(changes, ToolItemStatus::Declined), true).await;
                return None;
            };
            if let Some(refusal) = answer {
                emit_item(turn, item(changes, ToolItemStatus::Declined), true).await;
                return Some(output(refusal));
            }
            outside
        }
    };
    let writer = match approved_writer(area, allowed_outside, &settings) {
        Ok(writer) => writer,
        Err(error) => {
            emit_item(turn, item(changes, ToolItemStatus::Failed), true).await;
            return Some(output(format!("apply_patch failed: {error}")));
        }
    };
    let summary = success_text(&planned);
    let snapshots = turn.file_snapshots.clone();
    let cwd = settings.cwd.clone();
    // The files are read again and compared, written, fsynced, and the turn's diff read back,
    // all off the async threads.
    let written = off_thread(move || {
        commit_changes(&planned, &writer)?;
        Ok(match snapshots.lock() {
            Ok(mut snapshots) => {
                snapshots.record(&planned);
                snapshots.diff(&cwd)
            }
            Err(_) => String::new(),
        })
    })
    .await;
    match written {
        Ok(diff) => {
            emit_item(turn, item(changes, ToolItemStatus::Completed), true).await;
            turn.emit(EventMsg::TurnDiff {
                turn_id: turn.turn_id.clone(),
                diff,
            })
            .await;
            Some(output(summary))
        }
        Err(error) => {
            emit_item(turn, item(changes, ToolItemStatus::Failed), true).await;
            Some(output(format!("apply_patch failed: {error}")))
        }
    }
}

/// Runs blocking file work on tokio's blocking pool; a panic there fails the patch.
async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApplyError> + Send + 'static,
) -> Result<T, ApplyError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| Err(ApplyError::Crashed(error.to_string())))
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
