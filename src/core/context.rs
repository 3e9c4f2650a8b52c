//! What the model is told about where it works, besides the base instructions: the `AGENTS.md`
//! files (the user's own in openturn's home, then the project's) and the environment (working
//! directory, shell, date, time zone, policies).
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

/// The file name looked for in openturn's home and in every folder from the repository root
/// down to the cwd.
pub const AGENTS_FILE: &str = "AGENTS.md";
const ENVIRONMENT_OPEN: &str = "<environment_context>";
const ENVIRONMENT_CLOSE: &str = "</environment_context>";
/// How every `AGENTS.md` text begins, whether it names a folder or not.
const DOCS_HEADING: &str = "# AGENTS.md instructions";
/// Between the user's own file and the project's: the label the reference uses, so a model
/// tuned on it reads the two parts the same way.
const PROJECT_DOCS_SEPARATOR: &str = "\n\n--- project-doc ---\n\n";
/// Opens the text told after a change of working directory, when earlier files were told.
const REPLACES_NOTE: &str =
    "The working directory changed: these AGENTS.md instructions take the place of any given earlier.";
/// The whole text told when the new working directory has no `AGENTS.md` and earlier ones were
/// told.
const NO_DOCS_NOTE: &str =
    "The working directory changed and no AGENTS.md applies there: the AGENTS.md instructions given earlier no longer apply.";

/// The `AGENTS.md` text for the model, and a warning when it had to be cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDocs {
    pub text: String,
    pub cut_warning: Option<String>,
}

/// When the `AGENTS.md` text is built: decides whether it says it replaces earlier ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocsOccasion {
    /// The thread's first turn: nothing was told before.
    FirstTurn,
    /// A turn moved the working directory; `earlier_in_force` says whether the model holds
    /// `AGENTS.md` instructions from before the move.
    CwdChanged { earlier_in_force: bool },
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

/// The files' texts joined as they are read, within one byte budget shared by all of them.
struct JoinedDocs {
    text: String,
    /// Bytes of every file read or skipped for room, plus separators: what the cut note reports.
    total: u64,
    max_bytes: usize,
}

impl JoinedDocs {
    /// Appends the file at `path` after `separator` (when something precedes it); `false` when
    /// the file adds nothing (absent, unreadable, blank).
    fn push(&mut self, path: &Path, separator: &str) -> bool {
        let Ok(file) = std::fs::File::open(path) else {
            return false;
        };
        let Ok(metadata) = file.metadata() else {
            return false;
        };
        if !metadata.is_file() {
            return false;
        }
        // Read no more than could still be kept (plus one byte to see a cut), however big the file.
        let room = (self.max_bytes + 1).saturating_sub(self.text.len()) as u64;
        if room == 0 {
            self.total += metadata.len() + separator.len() as u64;
            return false;
        }
        let mut bytes = Vec::new();
        if file.take(room).read_to_end(&mut bytes).is_err() {
            tracing::warn!(path = %path.display(), "AGENTS.md could not be read");
            return false;
        }
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim_end();
        if text.trim().is_empty() {
            return false;
        }
        if !self.text.is_empty() {
            self.text.push_str(separator);
            self.total += separator.len() as u64;
        }
        self.total += metadata.len();
        self.text.push_str(text);
        true
    }

    /// The text cut to the budget with a note saying so, and the warning for the client.
    fn finish(mut self, cwd: &Path) -> (String, Option<String>) {
        if self.total <= self.max_bytes as u64 {
            return (self.text, None);
        }
        let (max_bytes, total) = (self.max_bytes, self.total);
        let mut end = max_bytes.min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        self.text.truncate(end);
        self.text.truncate(self.text.trim_end().len());
        self.text.push_str(&format!(
            "\n\n[AGENTS.md cut: only the first {max_bytes} of {total} bytes are included]"
        ));
        let warning = format!(
            "The AGENTS.md files for {} total {total} bytes; the model was given the first \
             {max_bytes} (raise project_doc_max_bytes in config.toml to give it more)",
            cwd.display()
        );
        (self.text, Some(warning))
    }
}

/// Reads the `AGENTS.md` files that apply to `cwd` — `user_file` (the user's own) first, then
/// the project's from the repository root down — keeping at most `max_bytes` bytes of their
/// joined text. `None` when there is nothing to tell (or `max_bytes` is 0, which turns them off);
/// after a change of working directory that left earlier instructions in force, a note that
/// they no longer apply.
pub fn agents_docs(
    cwd: &Path,
    user_file: Option<&Path>,
    max_bytes: usize,
    occasion: DocsOccasion,
) -> Option<ProjectDocs> {
    let earlier_in_force = occasion
        == DocsOccasion::CwdChanged {
            earlier_in_force: true,
        };
    let mut joined = JoinedDocs {
        text: String::new(),
        total: 0,
        max_bytes,
    };
    let from_user = max_bytes > 0 && user_file.is_some_and(|file| joined.push(file, ""));
    let mut from_project = false;
    for folder in doc_folders(cwd).iter().filter(|_| max_bytes > 0) {
        let separator = match (from_user, from_project) {
            (true, false) => PROJECT_DOCS_SEPARATOR,
            _ => "\n\n",
        };
        from_project |= joined.push(&folder.join(AGENTS_FILE), separator);
    }
    if !from_user && !from_project {
        return earlier_in_force.then(|| ProjectDocs {
            text: docs_text(DOCS_HEADING, NO_DOCS_NOTE),
            cut_warning: None,
        });
    }
    // The user's file alone is not about the folder, so the heading names none.
    let heading = if from_project {
        format!("{DOCS_HEADING} for {}", cwd.display())
    } else {
        DOCS_HEADING.to_string()
    };
    let (text, cut_warning) = joined.finish(cwd);
    let body = if earlier_in_force {
        format!("{REPLACES_NOTE}\n\n{text}")
    } else {
        text
    };
    Some(ProjectDocs {
        text: docs_text(&heading, &body),
        cut_warning,
    })
}

fn docs_text(heading: &str, body: &str) -> String {
    format!(
        "{heading}\n\n<INSTRUCTIONS>\n{}\n</INSTRUCTIONS>",
        body.trim_end()
    )
}

/// Whether the model holds `AGENTS.md` instructions from `history`: some were told, and the
/// last told was not the note that they no longer apply.
pub fn agents_docs_in_force(history: &[ResponseItem]) -> bool {
    history
        .iter()
        .rev()
        .find_map(agents_docs_piece)
        .is_some_and(|text| !text.contains(NO_DOCS_NOTE))
}

/// Whether `item` is a context message carrying an `AGENTS.md` text (or the note that none
/// applies any more): compaction keeps the last such message.
pub fn carries_agents_docs(item: &ResponseItem) -> bool {
    is_context_message(item) && agents_docs_piece(item).is_some()
}

/// The `AGENTS.md` piece of a user-role message, if it holds one.
fn agents_docs_piece(item: &ResponseItem) -> Option<&str> {
    match item {
        ResponseItem::Message { role, content, .. } if role == "user" => {
            content.iter().find_map(|piece| match piece {
                ContentItem::InputText { text } if text.starts_with(DOCS_HEADING) => {
                    Some(text.as_str())
                }
                _ => None,
            })
        }
        _ => None,
    }
}

/// The working directory an environment block names (escaped as in the block), if any.
pub fn environment_cwd(block: &str) -> Option<&str> {
    let start = block.find("<cwd>")? + "<cwd>".len();
    let end = start + block[start..].find("</cwd>")?;
    Some(&block[start..end])
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

    /// The project's docs for a first turn, with no user file.
    fn first(cwd: &Path, max_bytes: usize) -> Option<ProjectDocs> {
        agents_docs(cwd, None, max_bytes, DocsOccasion::FirstTurn)
    }

    #[test]
    fn the_users_file_comes_first_and_a_change_of_cwd_says_what_replaces_what() {
        let dir = tempfile::tempdir().unwrap();
        let (home, repo, bare) = (
            dir.path().join("home"),
            dir.path().join("repo"),
            dir.path().join("bare"),
        );
        for folder in [&home, &repo.join(".git"), &bare] {
            std::fs::create_dir_all(folder).unwrap();
        }
        let user_file = home.join(AGENTS_FILE);
        write(&user_file, "mine\n");
        write(&repo.join(AGENTS_FILE), "theirs\n");
        let both = agents_docs(&repo, Some(&user_file), 1024, DocsOccasion::FirstTurn).unwrap();
        assert_eq!(
            both.text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nmine\n\n--- project-doc ---\n\n\
                 theirs\n</INSTRUCTIONS>",
                repo.display()
            )
        );
        let moved = DocsOccasion::CwdChanged {
            earlier_in_force: true,
        };
        let alone = agents_docs(&bare, Some(&user_file), 1024, moved).unwrap();
        assert_eq!(
            alone.text,
            format!("# AGENTS.md instructions\n\n<INSTRUCTIONS>\n{REPLACES_NOTE}\n\nmine\n</INSTRUCTIONS>")
        );
        let none = agents_docs(&bare, None, 1024, moved).unwrap();
        assert_eq!(
            none.text,
            format!("# AGENTS.md instructions\n\n<INSTRUCTIONS>\n{NO_DOCS_NOTE}\n</INSTRUCTIONS>")
        );
        let nothing_before = DocsOccasion::CwdChanged {
            earlier_in_force: false,
        };
        assert_eq!(agents_docs(&bare, None, 1024, nothing_before), None);
        let history = |text: &str| {
            vec![context_message(vec![
                text.to_string(),
                "<environment_context>\n</environment_context>".into(),
            ])]
        };
        assert!(agents_docs_in_force(&history(&both.text)));
        assert!(agents_docs_in_force(&history(&alone.text)));
        assert!(!agents_docs_in_force(&history(&none.text)));
        assert!(!agents_docs_in_force(&[]));
        assert!(carries_agents_docs(&history(&none.text)[0]));
    }

    #[test]
    fn docs_run_from_the_repository_root_down_to_the_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        // Above the repository: not part of it, never read.
        write(&dir.path().join(AGENTS_FILE), "outside");
        write(&root.join(AGENTS_FILE), "root rules");
        write(&sub.join(AGENTS_FILE), "sub rules");
        let docs = first(&sub, 1024).expect("no docs");
        assert_eq!(
            docs.text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nroot rules\n\nsub rules\n</INSTRUCTIONS>",
                sub.display()
            )
        );
        assert_eq!(docs.cut_warning, None);
        let cut = first(&sub, 12).expect("no docs");
        assert!(
            cut.text
                .contains("root rules\n\n[AGENTS.md cut: only the first 12 of 21 bytes"),
            "{}",
            cut.text
        );
        assert!(cut.cut_warning.is_some());
        assert_eq!(first(&sub, 0), None);
    }

    #[test]
    fn outside_a_repository_only_the_cwd_counts() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("x");
        std::fs::create_dir_all(&sub).unwrap();
        write(&dir.path().join(AGENTS_FILE), "parent");
        assert_eq!(first(&sub, 1024), None);
        write(&sub.join(AGENTS_FILE), "here");
        let docs = first(&sub, 1024).expect("no docs");
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
        assert_eq!(environment_cwd(&block), Some("/"));
    }
}
