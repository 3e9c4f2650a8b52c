//! The gate a patch passes before it is written: the reference's rule over the thread's approval
//! policy and the paths its sandbox lets be written, and the writer an allowed patch is written
//! with.

use std::path::{Path, PathBuf};

use super::super::super::sandboxing::CommandSandbox;
use super::super::super::settings::{ApprovalPolicy, SandboxMode, ThreadSettings};
use super::apply::{PlannedChange, PlannedKind};
use crate::sandbox::{ConfinedWriter, WritableArea};

/// What happens to a patch before it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Gate {
    Apply,
    Ask,
    Refuse(String),
}

/// The reference's rule for patches. `untrusted` asks about every patch. Otherwise a patch whose
/// every path the thread's sandbox lets be written (its [`WritableArea`], the same one its
/// commands are confined to) is applied without asking; any other patch is asked about, or
/// refused under `never`, with the reason the model needs to do something else. Also returns
/// the paths outside the area: once the user approves the patch, these (and only these) are
/// written outside it.
pub(super) fn gate(
    settings: &ThreadSettings,
    area: Result<&WritableArea, &str>,
    changes: &[PlannedChange],
) -> (Gate, Vec<PathBuf>) {
    let paths = changes
        .iter()
        .flat_map(|change| [Some(change.path.as_path()), moved_to(change)])
        .flatten();
    let mut outside = Vec::new();
    let mut denied = None;
    for path in paths {
        let refusal = match area {
            Ok(area) => area.check(path).err().map(|denied| denied.to_string()),
            Err(error) => Some(format!("the sandbox's writable paths are unknown: {error}")),
        };
        if let Some(reason) = refusal {
            denied.get_or_insert(reason);
            outside.push(path.to_path_buf());
        }
    }
    let policy = settings.approval_policy;
    if policy == ApprovalPolicy::Untrusted {
        return (Gate::Ask, outside);
    }
    let Some(reason) = denied else {
        return (Gate::Apply, outside);
    };
    if policy != ApprovalPolicy::Never {
        return (Gate::Ask, outside);
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
    let refusal = format!("patch rejected: {reason}. No file was changed. {advice}");
    (Gate::Refuse(refusal), outside)
}

/// The paths this thread's sandbox lets be written (the reason as text when they are unknown).
pub(super) fn writable_area(settings: &ThreadSettings) -> Result<WritableArea, String> {
    CommandSandbox::for_thread(settings)
        .writable_area(&settings.cwd)
        .map_err(|error| error.to_string())
}

/// The writer for an approved patch: confined to the area except for the `outside` paths the
/// user allowed; with no known area, the user's approval is all there is to go by.
pub(super) fn approved_writer(
    area: Result<&WritableArea, &str>,
    outside: Vec<PathBuf>,
    settings: &ThreadSettings,
) -> Result<ConfinedWriter, String> {
    let area = match area {
        Ok(area) => area.clone(),
        Err(_) => CommandSandbox::for_thread(settings)
            .unconfined()
            .writable_area(&settings.cwd)
            .map_err(|error| error.to_string())?,
    };
    Ok(ConfinedWriter::new(&area).allow_outside(outside))
}

fn moved_to(change: &PlannedChange) -> Option<&Path> {
    match &change.kind {
        PlannedKind::Update { move_to } => move_to.as_deref(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn add(path: PathBuf) -> PlannedChange {
        PlannedChange {
            display_path: path.display().to_string(),
            path,
            kind: PlannedKind::Add,
            old_content: None,
            new_content: Some("x\n".into()),
            target_before: None,
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
        let name = |(gate, _): (Gate, Vec<PathBuf>)| match gate {
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
            let area = writable_area(&settings);
            let area = area.as_ref().map_err(String::as_str);
            assert_eq!(
                name(gate(&settings, area, &inside)),
                for_inside,
                "{case}, inside"
            );
            assert_eq!(
                name(gate(&settings, area, &escaping)),
                for_escaping,
                "{case}, escaping"
            );
            // The paths outside the area are listed whatever the decision.
            let expected_outside = match sandbox {
                DangerFullAccess => vec![],
                ReadOnly => vec![cwd.join("b.txt"), outside.path().join("moved.txt")],
                _ => vec![outside.path().join("moved.txt")],
            };
            assert_eq!(
                gate(&settings, area, &escaping).1,
                expected_outside,
                "{case}"
            );
        }
    }
}
