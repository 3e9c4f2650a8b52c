//! The turn's cumulative diff: each touched file is remembered as it was before the turn first
//! changed it, and the diff compares that with what is on disk now. Git is not needed (a
//! workspace need not be a repository); the output has git's `diff --git` shape so tools that
//! read `git diff` read it too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::apply::PlannedChange;

/// Path → content before the turn's first change (`None`: the file did not exist).
#[derive(Debug, Default)]
pub(crate) struct TurnSnapshots {
    before: BTreeMap<PathBuf, Option<String>>,
}

impl TurnSnapshots {
    /// Remembers the files `changes` touch, unless an earlier patch of the turn already did.
    pub(crate) fn record(&mut self, changes: &[PlannedChange]) {
        for change in changes {
            self.before
                .entry(change.path.clone())
                .or_insert_with(|| change.old_content.clone());
            if change.moves() {
                self.before
                    .entry(change.target().to_path_buf())
                    .or_insert_with(|| change.target_before.clone());
            }
        }
    }

    /// The unified diff from the snapshots to the files now, paths relative to `cwd`. It reads
    /// every file the turn touched: callers run it off the async threads.
    pub(crate) fn diff(&self, cwd: &Path) -> String {
        let mut out = String::new();
        for (path, before) in &self.before {
            let after = std::fs::read_to_string(path).ok();
            if &after == before {
                continue;
            }
            let name = path.strip_prefix(cwd).unwrap_or(path).display().to_string();
            out.push_str(&file_diff(&name, before.as_deref(), after.as_deref()));
        }
        out
    }
}

fn file_diff(name: &str, before: Option<&str>, after: Option<&str>) -> String {
    let mut out = format!("diff --git a/{name} b/{name}\n");
    let (old_label, new_label) = match (before, after) {
        (None, _) => {
            out.push_str("new file mode 100644\n");
            ("/dev/null".to_string(), format!("b/{name}"))
        }
        (_, None) => {
            out.push_str("deleted file mode 100644\n");
            (format!("a/{name}"), "/dev/null".to_string())
        }
        _ => (format!("a/{name}"), format!("b/{name}")),
    };
    let body = similar::TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&old_label, &new_label)
        .to_string();
    out.push_str(&body);
    out
}
