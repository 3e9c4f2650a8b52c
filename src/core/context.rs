//! What the model is told about where it works, besides the base instructions: the project's
//! `AGENTS.md` files and the environment (working directory, shell, date, time zone, policies).
//!
//! Both travel as user-role messages recorded in the thread's history — and so in its rollout —
//! rather than being rebuilt for every request: a resumed thread then sends exactly what the
//! original would have, and a later change (a `turn/start` that moves the cwd or the sandbox) is
//! told once, at the point it happened. This module only builds the texts and reads them back
//! out of a history; the turn decides when to record them.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::wire::item::ContentItem;
use crate::wire::ResponseItem;

use super::settings::{ApprovalPolicy, SandboxMode, ThreadSettings};

/// The file name looked for in every folder from the repository root down to the cwd.
const PROJECT_DOC_FILE: &str = "AGENTS.md";
const ENVIRONMENT_OPEN: &str = "<environment_context>";
const ENVIRONMENT_CLOSE: &str = "</environment_context>";

/// The `AGENTS.md` text for the model, and a warning when it had to be cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDocs {
    pub text: String,
    pub cut_warning: Option<String>,
}

/// The folders whose `AGENTS.md` apply to `cwd`, root first: from the nearest ancestor holding
/// `.git` down to `cwd`, or just `cwd` outside a repository.
fn doc_folders(cwd: &Path) -> Vec<PathBuf> {
    let Some(root) = cwd.ancestors().find(|folder| folder.join(".git").exists()) else {
        return vec![cwd.to_path_buf()];
    };
    let mut folders: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|folder| *folder != root)
        .map(Path::to_path_buf)
        .collect();
    folders.push(root.to_path_buf());
    folders.reverse();
    folders
}

/// Reads the applicable `AGENTS.md` files, root first, keeping at most `max_bytes` bytes of their
/// joined text. `None` when there are none (or `max_bytes` is 0, which turns them off).
pub fn project_docs(cwd: &Path, max_bytes: usize) -> Option<ProjectDocs> {
    if max_bytes == 0 {
        return None;
    }
    let mut joined = String::new();
    let mut total: u64 = 0;
    for folder in doc_folders(cwd) {
        let path = folder.join(PROJECT_DOC_FILE);
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let Ok(metadata) = file.metadata() else {
            continue;
        };
        if !metadata.is_file() {
            continue;
        }
        // Read no more than could still be kept (plus one byte to see a cut), however big the file.
        let room = (max_bytes + 1).saturating_sub(joined.len()) as u64;
        if room == 0 {
            total += metadata.len() + 2;
            continue;
        }
        let mut bytes = Vec::new();
        if file.take(room).read_to_end(&mut bytes).is_err() {
            tracing::warn!(path = %path.display(), "AGENTS.md could not be read");
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        if text.trim().is_empty() {
            continue;
        }
        if !joined.is_empty() {
            joined.push_str("\n\n");
            total += 2;
        }
        total += metadata.len();
        joined.push_str(&text);
    }
    if joined.is_empty() {
        return None;
    }
    let mut cut_warning = None;
    if total > max_bytes as u64 {
        let mut end = max_bytes.min(joined.len());
        while !joined.is_char_boundary(end) {
            end -= 1;
        }
        joined.truncate(end);
        joined.truncate(joined.trim_end().len());
        joined.push_str(&format!(
            "\n\n[AGENTS.md cut: only the first {max_bytes} of {total} bytes are included]"
        ));
        cut_warning = Some(format!(
            "The AGENTS.md files for {} total {total} bytes; the model was given the first \
             {max_bytes} (raise project_doc_max_bytes in config.toml to give it more)",
            cwd.display()
        ));
    }
    Some(ProjectDocs {
        text: format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{}\n</INSTRUCTIONS>",
            cwd.display(),
            joined.trim_end()
        ),
        cut_warning,
    })
}

/// The environment block for `settings`, as of now.
pub fn environment_context(settings: &ThreadSettings) -> String {
    let now = chrono::Local::now();
    let lines = [
        ("cwd", settings.cwd.display().to_string()),
        ("shell", shell_name()),
        ("current_date", now.format("%Y-%m-%d").to_string()),
        ("timezone", time_zone(&now)),
        (
            "approval_policy",
            approval_name(settings.approval_policy).to_string(),
        ),
        ("sandbox_mode", sandbox_name(settings.sandbox).to_string()),
        (
            "network_access",
            network_access(settings.sandbox).to_string(),
        ),
    ];
    let mut text = format!("{ENVIRONMENT_OPEN}\n");
    for (tag, value) in lines {
        text.push_str(&format!("  <{tag}>{}</{tag}>\n", escape(&value)));
    }
    text.push_str(ENVIRONMENT_CLOSE);
    text
}

/// The last environment block a history told the model, if any.
pub fn last_environment_context(history: &[ResponseItem]) -> Option<&str> {
    history.iter().rev().find_map(|item| match item {
        ResponseItem::Message { role, content, .. } if role == "user" => {
            content.iter().rev().find_map(|piece| match piece {
                ContentItem::InputText { text } if text.starts_with(ENVIRONMENT_OPEN) => {
                    Some(text.as_str())
                }
                _ => None,
            })
        }
        _ => None,
    })
}

/// Whether `item` is a context message (it carries an environment block): compaction keeps
/// these, since they are what the model is told about where it works, not conversation.
pub fn is_context_message(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Message { role, content, .. } if role == "user" => {
            content.iter().any(|piece| {
                matches!(piece, ContentItem::InputText { text } if text.starts_with(ENVIRONMENT_OPEN))
            })
        }
        _ => false,
    }
}

/// The user-role message carrying `texts`, one input-text piece each.
pub fn context_message(texts: Vec<String>) -> ResponseItem {
    ResponseItem::Message {
        id: None,
        role: "user".to_string(),
        content: texts
            .into_iter()
            .map(|text| ContentItem::InputText { text })
            .collect(),
        phase: None,
    }
}

/// The user's shell by name (`bash`, `zsh`), as commands run in it.
fn shell_name() -> String {
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|shell| !shell.is_empty())
        .unwrap_or_else(|| "/bin/bash".to_string());
    Path::new(&shell)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or(shell)
}

/// The IANA zone name when the system says (`TZ`, or where `/etc/localtime` points), else the
/// UTC offset.
fn time_zone(now: &chrono::DateTime<chrono::Local>) -> String {
    if let Ok(zone) = std::env::var("TZ") {
        let zone = zone.trim_start_matches(':');
        if !zone.is_empty() {
            return zone.to_string();
        }
    }
    if let Ok(target) = std::fs::read_link("/etc/localtime") {
        let target = target.to_string_lossy().into_owned();
        if let Some((_, zone)) = target.split_once("zoneinfo/") {
            return zone.to_string();
        }
    }
    format!("UTC{}", now.format("%:z"))
}

fn approval_name(policy: ApprovalPolicy) -> &'static str {
    match policy {
        ApprovalPolicy::Untrusted => "untrusted",
        ApprovalPolicy::OnRequest => "on-request",
        ApprovalPolicy::Never => "never",
    }
}

fn sandbox_name(sandbox: SandboxMode) -> &'static str {
    match sandbox {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::DangerFullAccess => "danger-full-access",
    }
}

/// Only full access lets commands reach the network; the confined modes do not.
fn network_access(sandbox: SandboxMode) -> &'static str {
    match sandbox {
        SandboxMode::DangerFullAccess => "enabled",
        SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => "restricted",
    }
}

/// A path or name may hold `<` or `&`; escaped so the block stays well formed.
fn escape(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn docs_run_from_the_repository_root_down_to_the_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        // Above the repository: not part of it, never read.
        write(&dir.path().join(PROJECT_DOC_FILE), "outside");
        write(&root.join(PROJECT_DOC_FILE), "root rules");
        write(&sub.join(PROJECT_DOC_FILE), "sub rules");
        let docs = project_docs(&sub, 1024).expect("no docs");
        assert_eq!(
            docs.text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nroot rules\n\nsub rules\n</INSTRUCTIONS>",
                sub.display()
            )
        );
        assert_eq!(docs.cut_warning, None);
        let cut = project_docs(&sub, 12).expect("no docs");
        assert!(
            cut.text
                .contains("root rules\n\n[AGENTS.md cut: only the first 12 of 21 bytes"),
            "{}",
            cut.text
        );
        assert!(cut.cut_warning.is_some());
        assert_eq!(project_docs(&sub, 0), None);
    }

    #[test]
    fn outside_a_repository_only_the_cwd_counts() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("x");
        std::fs::create_dir_all(&sub).unwrap();
        write(&dir.path().join(PROJECT_DOC_FILE), "parent");
        assert_eq!(project_docs(&sub, 1024), None);
        write(&sub.join(PROJECT_DOC_FILE), "here");
        let docs = project_docs(&sub, 1024).expect("no docs");
        assert!(docs.text.contains("<INSTRUCTIONS>\nhere\n</INSTRUCTIONS>"));
    }

    #[test]
    fn the_last_environment_block_is_found_in_history() {
        let settings = ThreadSettings::for_tests();
        let block = environment_context(&settings);
        assert!(
            block.starts_with("<environment_context>\n  <cwd>"),
            "{block}"
        );
        assert!(
            block.contains("<sandbox_mode>read-only</sandbox_mode>"),
            "{block}"
        );
        let history = vec![
            context_message(vec!["docs".into(), block.clone()]),
            ResponseItem::user_text("hi"),
        ];
        assert_eq!(last_environment_context(&history), Some(block.as_str()));
        assert_eq!(last_environment_context(&history[1..]), None);
    }
}
