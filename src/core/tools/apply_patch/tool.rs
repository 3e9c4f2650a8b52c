//! The `apply_patch` tool as the model sees it and as a turn runs it: the two definitions
//! (freeform with a grammar, or a JSON function with one `input` string), the policy gate, the
//! `fileChange` item and the answer the model reads.

use std::path::Path;

use serde_json::{json, Value};

use super::super::super::event::EventMsg;
use super::super::super::ids::ItemId;
use super::super::super::items::{FileChangeEntry, FileChangeKind, ToolItemStatus, TurnItem};
use super::super::super::models::ApplyPatchForm;
use super::super::super::settings::ThreadSettings;
use super::super::handle::TurnHandle;
use super::super::output::ToolOutput;
use super::apply::{commit_changes, plan_changes, ApplyError, PlannedChange, PlannedKind};
use super::gate::{approved_writer, gate, writable_area, Gate};
use super::parser::{parse_patch, FileOp, Patch};
use crate::sandbox::ConfinedWriter;

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

/// One call and the `fileChange` item it owns: what every way out of [`run`] needs.
struct PatchCall<'a> {
    turn: &'a TurnHandle,
    id: ItemId,
    custom: bool,
    /// Whether the item started already (it does while a previewed patch streams).
    started: bool,
}

impl PatchCall<'_> {
    fn output(&self, text: String) -> ToolOutput {
        ToolOutput {
            call_id: self.id.clone(),
            custom: self.custom,
            text,
        }
    }

    fn item(&self, changes: Vec<FileChangeEntry>, status: ToolItemStatus) -> TurnItem {
        TurnItem::FileChange {
            id: self.id.clone(),
            changes,
            status,
        }
    }

    /// Starts the item with `changes`, unless it started while the patch streamed.
    async fn start(&mut self, changes: &[FileChangeEntry]) {
        if !self.started {
            let item = self.item(changes.to_vec(), ToolItemStatus::InProgress);
            self.turn.item_started(item).await;
            self.started = true;
        }
    }

    /// Completes the item and gives the model `text`.
    async fn finish(
        &self,
        changes: Vec<FileChangeEntry>,
        status: ToolItemStatus,
        text: String,
    ) -> ToolOutput {
        self.turn.item_completed(self.item(changes, status)).await;
        self.output(text)
    }
}

/// Runs one `apply_patch` call whose paths are relative to `dir` (a heredoc's `cd` or
/// `workdir`; the thread's cwd when `None`). `None` when the turn ended while waiting for the
/// user. The item of a previewed patch started when its input began; any other item starts
/// here. Either way it completes here, whatever happens.
pub(crate) async fn run(
    turn: &TurnHandle,
    call_id: ItemId,
    custom: bool,
    input: &str,
    dir: Option<&Path>,
) -> Option<ToolOutput> {
    let mut call = PatchCall {
        turn,
        started: turn.item_is_open(&call_id),
        id: call_id,
        custom,
    };
    let settings = turn.env.settings();
    let patch = match parse_patch(input) {
        Ok(patch) => patch,
        Err(error) => {
            let text = format!("apply_patch failed: {error}");
            // A patch that never parsed has no item, unless its preview started one.
            if call.started {
                return Some(call.finish(Vec::new(), ToolItemStatus::Failed, text).await);
            }
            return Some(call.output(text));
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
            call.start(&changes).await;
            let text = format!("apply_patch failed: {error}");
            return Some(call.finish(changes, ToolItemStatus::Failed, text).await);
        }
    };
    let changes = entries(&planned);
    call.start(&changes).await;
    let writer = match authorize(&call, &settings, &planned, &changes).await {
        Ok(writer) => writer,
        Err(answer) => return answer,
    };
    Some(write(&call, &settings, planned, changes, writer).await)
}

/// Passes the patch through the gate (asking the user when it says so) and gives the writer it
/// may be written with; otherwise the item is completed and the model's answer returned
/// (`None` when the turn ended while the user was asked).
async fn authorize(
    call: &PatchCall<'_>,
    settings: &ThreadSettings,
    planned: &[PlannedChange],
    changes: &[FileChangeEntry],
) -> Result<ConfinedWriter, Option<ToolOutput>> {
    let area = writable_area(settings);
    let area = area.as_ref().map_err(String::as_str);
    let (decision, outside) = gate(settings, area, planned);
    let declined = ToolItemStatus::Declined;
    let allowed_outside = match decision {
        Gate::Apply => Vec::new(),
        Gate::Refuse(text) => {
            return Err(Some(call.finish(changes.to_vec(), declined, text).await))
        }
        Gate::Ask => match super::approval::ask(call.turn, &call.id).await {
            None => {
                call.turn
                    .item_completed(call.item(changes.to_vec(), declined))
                    .await;
                return Err(None);
            }
            Some(Some(refusal)) => {
                return Err(Some(call.finish(changes.to_vec(), declined, refusal).await))
            }
            Some(None) => outside,
        },
    };
    match approved_writer(area, allowed_outside, settings) {
        Ok(writer) => Ok(writer),
        Err(error) => {
            let text = format!("apply_patch failed: {error}");
            Err(Some(
                call.finish(changes.to_vec(), ToolItemStatus::Failed, text)
                    .await,
            ))
        }
    }
}

/// Writes the patch off the async threads (every file read again and compared, then written,
/// fsynced, and the turn's diff read back), completes the item and announces the turn's diff.
async fn write(
    call: &PatchCall<'_>,
    settings: &ThreadSettings,
    planned: Vec<PlannedChange>,
    changes: Vec<FileChangeEntry>,
    writer: ConfinedWriter,
) -> ToolOutput {
    let summary = success_text(&planned);
    let snapshots = call.turn.file_snapshots.clone();
    let cwd = settings.cwd.clone();
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
            let output = call
                .finish(changes, ToolItemStatus::Completed, summary)
                .await;
            call.turn
                .emit(EventMsg::TurnDiff {
                    turn_id: call.turn.turn_id.clone(),
                    diff,
                })
                .await;
            output
        }
        Err(error) => {
            let text = format!("apply_patch failed: {error}");
            call.finish(changes, ToolItemStatus::Failed, text).await
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
