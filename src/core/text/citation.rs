//! Memory citations: the payload of hidden `<oai-mem-citation>` blocks, parsed into the entries
//! the client renders and the ids of the earlier threads the model drew on.
//!
//! A payload holds a `<citation_entries>` section, one `path:start-end|note=[why]` per line,
//! and a `<rollout_ids>` (or `<thread_ids>`) section, one id per line. Lines that do not parse
//! are skipped: a citation is a hint for the UI, never a reason to fail an item.

use crate::core::items::{MemoryCitation, MemoryCitationEntry};

const ENTRIES_TAG: &str = "citation_entries";
const ID_TAGS: [&str; 2] = ["rollout_ids", "thread_ids"];

/// Merges every payload of one message into one citation; `None` when nothing parsed.
pub(crate) fn parse_memory_citation(payloads: &[String]) -> Option<MemoryCitation> {
    let mut citation = MemoryCitation::default();
    for payload in payloads {
        if let Some(entries) = section(payload, ENTRIES_TAG) {
            citation
                .entries
                .extend(entries.lines().filter_map(parse_entry));
        }
        for tag in ID_TAGS {
            let Some(ids) = section(payload, tag) else {
                continue;
            };
            for id in ids.lines().map(str::trim).filter(|id| !id.is_empty()) {
                if !citation.thread_ids.iter().any(|known| known == id) {
                    citation.thread_ids.push(id.to_string());
                }
            }
        }
    }
    (!citation.entries.is_empty() || !citation.thread_ids.is_empty()).then_some(citation)
}

/// The text between `<tag>` and `</tag>`, if both are there.
fn section<'a>(payload: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = payload.find(&open)? + open.len();
    let length = payload[start..].find(&close)?;
    Some(&payload[start..start + length])
}

/// `path:start-end|note=[why]` (a single line number stands for a one-line range).
fn parse_entry(line: &str) -> Option<MemoryCitationEntry> {
    let line = line.trim();
    let (location, note) = match line.split_once("|note=") {
        Some((location, note)) => (location, note.trim()),
        None => (line, ""),
    };
    let note = note
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(note);
    let (path, range) = location.trim().rsplit_once(':')?;
    let (start, end) = match range.split_once('-') {
        Some((start, end)) => (start.trim().parse().ok()?, end.trim().parse().ok()?),
        None => {
            let only = range.trim().parse().ok()?;
            (only, only)
        }
    };
    (!path.is_empty()).then(|| MemoryCitationEntry {
        path: path.to_string(),
        line_start: start,
        line_end: end,
        note: note.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_ids_parse_from_the_documented_block_shape() {
        let payload = "\n<citation_entries>\nMEMORY.md:3-5|note=[build steps]\nnotes/a.md:9|note=[one line]\nnot an entry\n</citation_entries>\n<rollout_ids>\nid-1\nid-1\n</rollout_ids>\n";
        let second = "<citation_entries>\nb.md:1-2|note=[x]\n</citation_entries><thread_ids>id-2</thread_ids>";
        let citation = parse_memory_citation(&[payload.to_string(), second.to_string()]);
        let Some(citation) = citation else {
            panic!("no citation parsed");
        };
        assert_eq!(
            citation.entries,
            vec![
                MemoryCitationEntry {
                    path: "MEMORY.md".into(),
                    line_start: 3,
                    line_end: 5,
                    note: "build steps".into(),
                },
                MemoryCitationEntry {
                    path: "notes/a.md".into(),
                    line_start: 9,
                    line_end: 9,
                    note: "one line".into(),
                },
                MemoryCitationEntry {
                    path: "b.md".into(),
                    line_start: 1,
                    line_end: 2,
                    note: "x".into(),
                },
            ]
        );
        assert_eq!(citation.thread_ids, vec!["id-1", "id-2"]);
    }

    #[test]
    fn a_payload_without_sections_is_no_citation() {
        assert_eq!(parse_memory_citation(&["doc-1".to_string()]), None);
        assert_eq!(parse_memory_citation(&[]), None);
    }
}
