//! Where rollout files live.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

pub fn sessions_dir(home: &Path) -> PathBuf {
    home.join("sessions")
}

pub fn archived_dir(home: &Path) -> PathBuf {
    home.join("archived_sessions")
}

/// `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread id>.jsonl`.
pub fn rollout_path(home: &Path, thread_id: &str, created: DateTime<Utc>) -> PathBuf {
    sessions_dir(home)
        .join(created.format("%Y").to_string())
        .join(created.format("%m").to_string())
        .join(created.format("%d").to_string())
        .join(format!(
            "rollout-{}-{thread_id}.jsonl",
            created.format("%Y-%m-%dT%H-%M-%S")
        ))
}

/// Finds the rollout of `thread_id` under `root` (sessions or archived), newest layout first.
pub fn find_rollout(root: &Path, thread_id: &str) -> Option<PathBuf> {
    let suffix = format!("-{thread_id}.jsonl");
    let mut stack = vec![root.to_path_buf()];
    // Bounded by the directory tree (YYYY/MM/DD): links to folders are not followed, so a
    // link cycle cannot make the walk endless.
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                stack.push(path);
            } else if path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("rollout-") && name.ends_with(&suffix))
            {
                return Some(path);
            }
        }
    }
    None
}

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}
