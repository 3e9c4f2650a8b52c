//! One line of the thread index: what `thread/list` needs to know about one persisted thread,
//! built from a rollout's session meta and kept current as its items are appended.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::line::SessionMeta;
use super::reader::RolloutContents;

/// The most characters of a thread's name and preview the index keeps. Every upsert writes the
/// whole entry, so an unbounded name (a client may set megabytes) would grow the index by its
/// full size at every turn boundary; a listing only shows the start of either anyway.
pub const INDEX_TEXT_CHARS: usize = 400;

/// `text` cut to at most [`INDEX_TEXT_CHARS`] characters (at a character boundary).
pub fn bounded_text(text: &str) -> String {
    match text.char_indices().nth(INDEX_TEXT_CHARS) {
        Some((end, _)) => text[..end].to_string(),
        None => text.to_string(),
    }
}

/// What `thread/list` needs to know about one persisted thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexEntry {
    pub id: String,
    pub path: PathBuf,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
    /// The same moment in milliseconds where known (the writer stamps it), so threads updated
    /// within one second still sort in order.
    #[serde(default)]
    pub updated_at_ms: i64,
    pub cwd: String,
    #[serde(default)]
    pub model: Option<String>,
    pub model_provider: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub originator: Option<String>,
    pub cli_version: String,
    #[serde(default)]
    pub forked_from_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// The first user message's text, else "".
    #[serde(default)]
    pub preview: String,
    #[serde(default)]
    pub archived: bool,
    /// What the last `thread/metadata/update` stored, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<super::line::StoredThreadMetadata>,
}

impl IndexEntry {
    /// The entry a rollout's contents describe.
    pub fn from_contents(contents: &RolloutContents, archived: bool) -> IndexEntry {
        let mut entry = IndexEntry::from_meta(&contents.meta, &contents.path, archived);
        for item in &contents.items {
            entry.observe(item);
        }
        entry
    }

    /// The entry of a thread that has only its session meta so far.
    pub fn from_meta(meta: &SessionMeta, path: &Path, archived: bool) -> IndexEntry {
        IndexEntry {
            id: meta.id.clone(),
            path: path.to_path_buf(),
            created_at: meta.created_at,
            updated_at: meta.created_at,
            updated_at_ms: meta.created_at * 1000,
            cwd: meta.cwd.clone(),
            model: Some(meta.model.clone()),
            model_provider: meta.model_provider.clone(),
            source: meta.source.clone(),
            originator: meta.originator.clone(),
            cli_version: meta.cli_version.clone(),
            forked_from_id: meta.forked_from_id.clone(),
            name: None,
            preview: String::new(),
            archived,
            metadata: None,
        }
    }

    /// Moves the update time forward to `at_ms` (never back).
    pub fn touch(&mut self, at_ms: i64) {
        self.updated_at_ms = self.updated_at_ms.max(at_ms);
        self.updated_at = self.updated_at.max(self.updated_at_ms / 1000);
    }

    /// Updates the entry for one appended rollout item; true when a listed field changed.
    pub fn observe(&mut self, item: &super::line::RolloutItem) -> bool {
        use super::line::RolloutItem;
        match item {
            RolloutItem::TurnStarted { started_at: at, .. }
            | RolloutItem::TurnEnded {
                completed_at: at, ..
            } => {
                self.touch(*at * 1000);
                true
            }
            RolloutItem::ThreadName { name } => {
                self.name = Some(bounded_text(name));
                true
            }
            RolloutItem::ThreadMetadata(metadata) => {
                self.metadata = Some(metadata.clone());
                true
            }
            RolloutItem::TurnItem { item, .. } if self.preview.is_empty() => {
                match user_message_text(item) {
                    Some(text) => {
                        self.preview = bounded_text(&text);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        }
    }
}

/// The text of a stored user-message turn item (core's serialized form, read leniently).
fn user_message_text(item: &serde_json::Value) -> Option<String> {
    if item.get("type")?.as_str()? != "user_message" {
        return None;
    }
    let text: Vec<&str> = item
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|part| part.get("text").and_then(serde_json::Value::as_str))
        .collect();
    Some(text.join("\n")).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_previews_are_cut_at_a_character_boundary() {
        let long = "é".repeat(INDEX_TEXT_CHARS + 5);
        assert_eq!(bounded_text(&long), "é".repeat(INDEX_TEXT_CHARS));
        assert_eq!(bounded_text("short"), "short");
    }
}
