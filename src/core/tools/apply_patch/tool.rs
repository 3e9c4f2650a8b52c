//! The `apply_patch` tool as the model sees it and as a turn runs it: the two definitions
//! (freeform with a grammar, or a JSON function with one `input` string), the policy gate, the
//! `fileChange` item and the answer the model reads.

use std::path::Path;

use serde_json::{json, Value};

use super::super::super::event::EventMsg;
use super::super::super::ids::ItemId;
use super::super::super::items::{FileChangeEntry, FileChangeKind, ToolItemStatus, TurnItem};
use super::super::super::models::ApplyPatchForm;
use super::super::super::sandboxing::CommandSandbox;
use super::super::super::settings::{ApprovalPolicy, SandboxMode, ThreadSettings};
use super::super::handle::TurnHandle;
use super::super::output::ToolOutput;
use super::apply::{commit_changes, plan_changes, PlannedChange, PlannedKind};
use super::parser::{parse_patch, FileOp, HunkLine, Patch};
use crate::sandbox::WritableArea;

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

/// What happens to a patch before it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Gate {
    Apply,
    Ask,
    Refuse(String),
}

/// The reference's rule for patches. `untrusted` asks about every patch. Otherwise a patch whose
/// every path the thread's sandbox lets be written (its [`WritableArea`], the same one its
/// commands are confined to) is applied without asking; any other patch is asked about, or
/// refused under `never`, with the reason the model needs to do something else.
fn gate(settings: &ThreadSettings, changes: &[PlannedChange]) -> Gate {
    let policy = settings.approval_policy;
    if policy == ApprovalPolicy::Untrusted {
        return Gate::Ask;
    }
    let denied = match writable_area(settings) {
        Ok(area) => changes
            .iter()
            .flat_map(|change| [Some(change.path.as_path()), moved_to(change)])
            .flatten()
            .find_map(|path| area.check(path).err())
            .map(|denied| denied.to_string()),
        Err(error) => Some(format!("the sandbox's writable paths are unknown: {error}")),
    };
    let Some(reason) = denied else {
        return Gate::Apply;
    };
    if policy != ApprovalPolicy::Never {
        return Gate::Ask;
    }
    let advice = match settings.sandbox {
        SandboxMode::ReadOnly => {
            "The sandbox is read-only and the approval policy is `never`: no file may be \
             written here, so report the change you would make instead."
        }
        _ => {
            "The approval policy is `never`, so the user cannot be asked to allow it: write \
             only inside the writable roots, or report the change you would make instead."
        }
    };
    Gate::Refuse(format!(
        "patch rejected: {reason}. No file was changed. {advice}"
    ))
}

/// The paths this thread's sandbox lets be written.
fn writable_area(settings: &ThreadSettings) -> Result<WritableArea, String> {
    CommandSandbox::for_thread(settings)
        .writable_area(&settings.cwd)
        .map_err(|error| error.to_string())
}

fn moved_to(change: &PlannedChange) -> Option<&Path> {
    match &change.kind {
        PlannedKind::Update { move_to } => move_to.as_deref(),
        _ => None,
    }
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
fn sort_by_path(entries: &mut [FileChangeEntry]) {
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

fn op_kind(op: &FileOp, path: impl Fn(&str) -> String) -> FileChangeKind {
    match op {
        FileOp::Add { .. } => FileChangeKind::Add,
        FileOp::Delete { .. } => FileChangeKind::Delete,
        FileOp::Update { move_to, .. } => FileChangeKind::Update {
            move_path: move_to.as_deref().map(path),
        },
    }
}

/// The client's view of a patch still being written, as the reference shows it: each file's
/// path as the patch writes it, an added file's lines so far, an updated file's hunks as
/// written (not yet matched against the file), nothing yet for a deleted file.
pub(crate) fn streamed_entries(patch: &Patch) -> Vec<FileChangeEntry> {
    let mut entries: Vec<FileChangeEntry> = patch
        .files
        .iter()
        .map(|op| FileChangeEntry {
            path: op.path().to_string(),
            kind: op_kind(op, str::to_string),
            diff: streamed_diff(op),
        })
        .collect();
    sort_by_path(&mut entries);
    entries
}

fn streamed_diff(op: &FileOp) -> String {
    match op {
        FileOp::Add { content, .. } => content.lines().map(|line| format!("{line}\n")).collect(),
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
/// user.
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
    let settings = turn.env.settings();
    let patch = match parse_patch(input) {
        Ok(patch) => patch,
        Err(error) => return Some(output(format!("apply_patch failed: {error}"))),
    };
    let item = |changes: Vec<FileChangeEntry>, status| TurnItem::FileChange {
        id: call_id.clone(),
        changes,
        status,
    };
    let base = match dir {
        Some(dir) => settings.cwd.join(dir),
        None => settings.cwd.clone(),
    };
    let planned = match plan_changes(&patch, &base) {
        Ok(planned) => planned,
        Err(error) => {
            let changes = entries_of_patch(&patch, &base);
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
mod gate_tests {
    use std::path::PathBuf;

    use super::*;

    fn add(path: PathBuf) -> PlannedChange {
        PlannedChange {
            display_path: path.display().to_string(),
            path,
            kind: PlannedKind::Add,
            old_content: None,
            new_content: Some("x\n".into()),
        }
    }

    /// Every policy against every sandbox, for a patch inside the workspace and one whose move
    /// target leaves it: the reference's table (docs/APPLY_PATCH.md).
    #[test]
    fn the_gate_follows_the_writable_area_and_the_approval_policy() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let inside = vec![add(cwd.join("a.txt"))];
        let escaping = vec![PlannedChange {
            kind: PlannedKind::Update {
                move_to: Some(outside.path().join("moved.txt")),
            },
            ..add(cwd.join("b.txt"))
        }];
        use ApprovalPolicy::{Never, OnRequest, Untrusted};
        use SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};
        let expected = [
            (ReadOnly, Never, "refuse", "refuse"),
            (ReadOnly, OnRequest, "ask", "ask"),
            (ReadOnly, Untrusted, "ask", "ask"),
            (WorkspaceWrite, Never, "apply", "refuse"),
            (WorkspaceWrite, OnRequest, "apply", "ask"),
            (WorkspaceWrite, Untrusted, "ask", "ask"),
            (DangerFullAccess, Never, "apply", "apply"),
            (DangerFullAccess, OnRequest, "apply", "apply"),
            (DangerFullAccess, Untrusted, "ask", "ask"),
        ];
        let name = |gate: Gate| match gate {
            Gate::Apply => "apply",
            Gate::Ask => "ask",
            Gate::Refuse(_) => "refuse",
        };
        for (sandbox, approval, for_inside, for_escaping) in expected {
            let mut settings = ThreadSettings::for_tests();
            settings.cwd = cwd.clone();
            settings.sandbox = sandbox;
            settings.approval_policy = approval;
            let case = format!("{sandbox:?} + {approval:?}");
            assert_eq!(name(gate(&settings, &inside)), for_inside, "{case}, inside");
            assert_eq!(
                name(gate(&settings, &escaping)),
                for_escaping,
                "{case}, escaping"
            );
        }
    }
}
