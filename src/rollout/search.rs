//! Text search inside one stored thread, for `thread/search`: the thread's name and preview
//! (from its index entry), then the conversation in its rollout — what the user wrote and what
//! the agent answered, the text a person remembers a thread by. Tool output and reasoning are
//! not searched.
//!
//! Bounded work: a file is read line by line up to a byte budget the caller gives, and a line
//! is parsed only when its raw bytes contain the term (case-insensitively), so a long thread
//! costs one pass over bytes, not one JSON parse per line. Matching folds case with Unicode
//! lowercase on both sides.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use super::index_entry::IndexEntry;
use super::line::{RolloutItem, RolloutLine};

/// How many characters of context a snippet shows on each side of the match.
const SNIPPET_CONTEXT_CHARS: usize = 60;

/// What searching one thread cost and found.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadMatch {
    /// Text around the first match, or `None` when nothing matched.
    pub snippet: Option<String>,
    /// Bytes of the rollout read (to charge against the search's budget).
    pub bytes_read: u64,
}

/// Searches `entry`'s name, preview and then its rollout (at most `byte_budget` bytes of it) for
/// `term_lower` (already lowercased, not empty). Blocking I/O; a file that cannot be read counts
/// as no match.
pub fn search_thread(entry: &IndexEntry, term_lower: &str, byte_budget: u64) -> ThreadMatch {
    for text in [entry.name.as_deref(), Some(entry.preview.as_str())]
        .into_iter()
        .flatten()
    {
        if let Some(snippet) = snippet_around(text, term_lower) {
            return ThreadMatch {
                snippet: Some(snippet),
                bytes_read: 0,
            };
        }
    }
    search_rollout(&entry.path, term_lower, byte_budget)
}

fn search_rollout(path: &Path, term_lower: &str, byte_budget: u64) -> ThreadMatch {
    let mut found = ThreadMatch {
        snippet: None,
        bytes_read: 0,
    };
    let Ok(file) = std::fs::File::open(path) else {
        return found;
    };
    let mut reader = BufReader::new(file.take(byte_budget));
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return found,
            Ok(read) => found.bytes_read += read as u64,
        }
        // Cheap prefilter on the raw bytes; JSON escapes only quotes, backslashes and control
        // characters, so a term without those appears in the line as it is.
        let raw = String::from_utf8_lossy(&line);
        if !raw.to_lowercase().contains(term_lower) {
            continue;
        }
        let Ok(parsed) = serde_json::from_slice::<RolloutLine>(&line) else {
            continue;
        };
        if let RolloutItem::TurnItem { item, .. } = &parsed.item {
            for text in conversation_texts(item) {
                if let Some(snippet) = snippet_around(text, term_lower) {
                    found.snippet = Some(snippet);
                    return found;
                }
            }
        }
    }
}

/// The texts of a stored user or agent message (core's serialized form, read leniently).
fn conversation_texts(item: &Value) -> Vec<&str> {
    match item.get("type").and_then(Value::as_str) {
        Some("user_message") => item
            .get("content")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default(),
        Some("agent_message") => item
            .get("text")
            .and_then(Value::as_str)
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// `text` around the first case-insensitive match of `term_lower`, with `…` where it was cut.
fn snippet_around(text: &str, term_lower: &str) -> Option<String> {
    // Lowercasing can change lengths (e.g. 'İ'), so the match is located by character index
    // over a per-character fold rather than by byte offset into `text`.
    let chars: Vec<char> = text.chars().collect();
    let folded: Vec<String> = chars.iter().map(|c| c.to_lowercase().collect()).collect();
    let term: Vec<char> = term_lower.chars().collect();
    let start = (0..chars.len()).find(|&at| {
        let mut candidate = folded[at..].iter().flat_map(|s| s.chars());
        term.iter().all(|t| candidate.next() == Some(*t))
    })?;
    let end = (start + term.len()).min(chars.len());
    let from = start.saturating_sub(SNIPPET_CONTEXT_CHARS);
    let to = (end + SNIPPET_CONTEXT_CHARS).min(chars.len());
    let mut snippet: String = chars[from..to].iter().collect();
    snippet = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    if from > 0 {
        snippet.insert(0, '…');
    }
    if to < chars.len() {
        snippet.push('…');
    }
    Some(snippet)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_fold_case_and_cut_long_text_at_both_ends() {
        assert_eq!(
            snippet_around("Refactor the Parser now", "parser").as_deref(),
            Some("Refactor the Parser now")
        );
        let long = format!("{} needle {}", "a".repeat(200), "b".repeat(200));
        let snippet = snippet_around(&long, "needle").unwrap();
        assert!(
            snippet.starts_with('…') && snippet.ends_with('…'),
            "{snippet}"
        );
        assert!(snippet.contains("needle"));
        assert!(snippet.chars().count() < 2 * SNIPPET_CONTEXT_CHARS + 10);
        assert_eq!(snippet_around("ÉCOLE", "école").as_deref(), Some("ÉCOLE"));
        assert_eq!(snippet_around("nothing here", "needle"), None);
    }

    #[test]
    fn only_the_conversation_is_searched_and_the_budget_bounds_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl");
        let line = |item: Value| {
            let line = RolloutLine::now(RolloutItem::TurnItem {
                turn_id: "t".into(),
                item,
                started_at_ms: None,
                completed_at_ms: None,
            });
            serde_json::to_string(&line).unwrap() + "\n"
        };
        let text = [
            line(serde_json::json!({"type": "command_execution", "id": "c", "command": "grep zebra"})),
            line(serde_json::json!({"type": "agent_message", "id": "m", "text": "The Zebra crossing"})),
        ]
        .concat();
        std::fs::write(&path, &text).unwrap();
        let full = search_rollout(&path, "zebra", u64::MAX);
        assert_eq!(full.snippet.as_deref(), Some("The Zebra crossing"));
        assert_eq!(full.bytes_read, text.len() as u64);
        // The budget stops before the agent's line: the command line alone does not match.
        let first_line = text.lines().next().unwrap().len() as u64 + 1;
        let cut = search_rollout(&path, "zebra", first_line);
        assert_eq!((cut.snippet, cut.bytes_read), (None, first_line));
    }
}
