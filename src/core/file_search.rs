//! Fuzzy file search: walks directories (honouring `.gitignore`, `.ignore` and the git excludes,
//! hidden files included, links not followed) into an index of relative paths, and ranks that
//! index against a query the way the reference app-server does. It knows nothing of JSON-RPC.
//!
//! Ranking, as observed on the reference: each path relative to its root is scored by
//! `nucleo-matcher` with its path settings, the query split into space-separated atoms matched
//! case-insensitively. On top of that score, a file whose matched characters all lie in its
//! name gains one [`BONUS_STEP`], and any entry whose name equals the query (case-insensitive)
//! gains two, so "the file you typed" outranks every path that merely contains the letters.
//! Ties go to the shorter-sorting path. At most [`MAX_RESULTS`] come back.
//!
//! The work is bounded: a walk stops after [`WalkLimits::max_entries`] entries or
//! [`WalkLimits::max_duration`], and both the walk and the ranking stop early when their cancel
//! flag is raised. Everything here blocks: callers run it off the async threads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// The most matches one search returns (the reference's page).
pub const MAX_RESULTS: usize = 50;

/// What a file's name matching adds to its score: above any score `nucleo` gives a path, so
/// the bonuses order results before the fuzzy score does.
pub const BONUS_STEP: u32 = 1 << 16;

/// How far one walk may go.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    pub max_entries: usize,
    pub max_duration: Duration,
}

impl Default for WalkLimits {
    /// A large repository (a few hundred thousand files) indexes within these; past them the
    /// search answers from what it has seen rather than keep a thread busy indefinitely.
    fn default() -> WalkLimits {
        WalkLimits {
            max_entries: 200_000,
            max_duration: Duration::from_secs(10),
        }
    }
}

/// One walked entry: which root it is under and its path relative to that root, with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedPath {
    pub root: usize,
    pub relative: String,
    pub is_directory: bool,
}

/// Everything found under a set of roots, in walk order.
#[derive(Debug, Clone, Default)]
pub struct FileIndex {
    /// The roots as the caller gave them.
    pub roots: Vec<String>,
    pub entries: Vec<IndexedPath>,
    /// Whether a limit or the cancel flag stopped the walk before it finished.
    pub truncated: bool,
}

/// One ranked match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatch {
    pub root: String,
    pub relative: String,
    pub file_name: String,
    pub is_directory: bool,
    pub score: u32,
    /// Character positions in `relative` the query matched, ascending and distinct.
    pub indices: Vec<u32>,
}

/// Walks every root (a root that does not exist or is not a directory adds nothing). An entry
/// under several of the roots (one root inside another) is kept once, under the deepest root,
/// so a result's root is the most specific one the caller named.
pub fn build_index(roots: &[String], limits: WalkLimits, cancel: &AtomicBool) -> FileIndex {
    let started = Instant::now();
    let mut index = FileIndex {
        roots: roots.to_vec(),
        ..FileIndex::default()
    };
    // Absolute path → position in `entries`, to keep each entry once.
    let mut seen: HashMap<PathBuf, usize> = HashMap::new();
    let mut depth_of: Vec<usize> = Vec::new();
    for (root_index, root) in roots.iter().enumerate() {
        let root_path = Path::new(root);
        if !root_path.is_dir() {
            continue;
        }
        let root_depth = root_path.components().count();
        let walker = ignore::WalkBuilder::new(root_path)
            .hidden(false)
            .follow_links(false)
            .build();
        for entry in walker {
            if index.entries.len() >= limits.max_entries
                || started.elapsed() >= limits.max_duration
                || cancel.load(Ordering::Relaxed)
            {
                index.truncated = true;
                return index;
            }
            // An unreadable directory is skipped; the rest of the walk goes on.
            let Ok(entry) = entry else { continue };
            if entry.depth() == 0 {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(root_path) else {
                continue;
            };
            let Some(relative) = relative.to_str() else {
                // A name that is not UTF-8 cannot be sent as a JSON string faithfully.
                continue;
            };
            let is_directory = entry.file_type().is_some_and(|kind| kind.is_dir());
            let indexed = IndexedPath {
                root: root_index,
                relative: relative.to_string(),
                is_directory,
            };
            match seen.get(entry.path()) {
                Some(&at) if depth_of[at] >= root_depth => {}
                Some(&at) => {
                    index.entries[at] = indexed;
                    depth_of[at] = root_depth;
                }
                None => {
                    seen.insert(entry.path().to_path_buf(), index.entries.len());
                    index.entries.push(indexed);
                    depth_of.push(root_depth);
                }
            }
        }
    }
    index
}

/// The best [`MAX_RESULTS`] entries of `index` for `query`, best first. An empty query (or one
/// of spaces) matches nothing, as on the reference. `None` when `cancel` was raised meanwhile.
pub fn rank(index: &FileIndex, query: &str, cancel: &AtomicBool) -> Option<Vec<FileMatch>> {
    if query.trim().is_empty() {
        return Some(Vec::new());
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
    let query_lower = query.to_lowercase();
    let mut characters = Vec::new();
    let mut indices = Vec::new();
    let mut best: Vec<FileMatch> = Vec::new();
    for (count, entry) in index.entries.iter().enumerate() {
        if count % 4096 == 0 && cancel.load(Ordering::Relaxed) {
            return None;
        }
        indices.clear();
        let haystack = Utf32Str::new(&entry.relative, &mut characters);
        let Some(score) = pattern.indices(haystack, &mut matcher, &mut indices) else {
            continue;
        };
        indices.sort_unstable();
        indices.dedup();
        let file_name = entry
            .relative
            .rsplit('/')
            .next()
            .unwrap_or(&entry.relative)
            .to_string();
        let score = score + bonus(entry, &file_name, &indices, &query_lower);
        best.push(FileMatch {
            root: index.roots.get(entry.root).cloned().unwrap_or_default(),
            relative: entry.relative.clone(),
            file_name,
            is_directory: entry.is_directory,
            score,
            indices: indices.clone(),
        });
        // Keep memory bounded by the page, not by the tree: trim whenever the candidates grow
        // well past it.
        if best.len() >= MAX_RESULTS * 8 {
            order_and_truncate(&mut best);
        }
    }
    order_and_truncate(&mut best);
    Some(best)
}

/// The name bonuses described in the module docs.
fn bonus(entry: &IndexedPath, file_name: &str, indices: &[u32], query_lower: &str) -> u32 {
    let name_start = (entry.relative.chars().count() - file_name.chars().count()) as u32;
    let mut bonus = 0;
    if !entry.is_directory && indices.first().is_some_and(|first| *first >= name_start) {
        bonus += BONUS_STEP;
    }
    if file_name.to_lowercase() == query_lower {
        bonus += 2 * BONUS_STEP;
    }
    bonus
}

fn order_and_truncate(matches: &mut Vec<FileMatch>) {
    matches.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| a.relative.cmp(&b.relative))
            .then_with(|| a.root.cmp(&b.root))
    });
    matches.truncate(MAX_RESULTS);
}

#[cfg(test)]
#[path = "file_search_tests.rs"]
mod tests;
