//! The rule of docs/ARCHITECTURE.md §3 ("One turn, and one response"), enforced: the files of
//! `src/core/` import each other in one direction only. A file that reaches a file which reaches
//! it back (through `use`, an inline `crate::`/`super::` path, or a `mod` declaration, so an item
//! defined in a `mod.rs` and used by its children counts) is reported with the whole circle.
//!
//! Test modules at the end of a file (`#[cfg(test)] mod …`) and `*_tests.rs` files are left out:
//! they import what they test by design.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

#[path = "support/source_tree.rs"]
mod source_tree;
use source_tree::rust_files;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The module path of a file relative to `src/`: `core/turn/mod.rs` is `["core", "turn"]`.
fn module_path(relative: &str) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// The code of a file without comments and without its trailing test module.
fn code_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = String::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let next_is_mod = lines[index + 1..]
            .iter()
            .map(|next| next.trim_start())
            .find(|next| !next.starts_with("#["))
            .is_some_and(|next| next.starts_with("mod "));
        if trimmed.starts_with("#[cfg(test)]") && next_is_mod {
            break;
        }
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    code
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Every module path `text` names from `start`: `a::b::{c, d::e}` gives `a::b::c` and
/// `a::b::d::e` (prefixes of those name the same files, so only the full paths are kept).
fn paths_from(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    let mut rest = text;
    loop {
        let name = identifier(rest);
        if name.is_empty() {
            break;
        }
        path.push(name.to_string());
        rest = &rest[name.len()..];
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    if let Some(inner) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut start = 0usize;
        for (index, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    paths_from(inner[start..index].trim(), path.clone(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    paths_from(inner[start..index].trim(), path.clone(), out);
                    start = index + 1;
                }
                _ => {}
            }
        }
    }
    out.push(path);
}

/// The files of `src/core/` that the file at `here` refers to.
fn references(
    code: &str,
    here: &[String],
    files: &BTreeMap<Vec<String>, String>,
) -> BTreeSet<String> {
    let mut paths = Vec::new();
    for (index, _) in code.match_indices("crate::") {
        let boundary = code[..index]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        if boundary {
            paths_from(&code[index + "crate::".len()..], Vec::new(), &mut paths);
        }
    }
    for (index, _) in code.match_indices("super::") {
        let boundary = code[..index]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        if !boundary {
            continue;
        }
        let mut base = here.to_vec();
        let mut rest = &code[index..];
        while let Some(after) = rest.strip_prefix("super::") {
            base.pop();
            rest = after;
        }
        paths_from(rest, base, &mut paths);
    }
    for line in code.lines() {
        let declared = line
            .trim_start()
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        if let Some(child) = declared.strip_prefix("mod ") {
            if child.trim_end().ends_with(';') {
                let mut path = here.to_vec();
                path.push(identifier(child).to_string());
                paths.push(path);
            }
        }
    }
    let mut found = BTreeSet::new();
    for path in paths {
        // The longest prefix of the path that names a file is the file it reaches.
        let file = (1..=path.len())
            .rev()
            .find_map(|length| files.get(&path[..length]));
        if let Some(file) = file {
            found.insert(file.clone());
        }
    }
    found
}

/// A circle through `start`, if one exists: the files from `start` back to it.
fn circle_through(start: &str, graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((file, trail)) = stack.pop() {
        for next in graph.get(&file).into_iter().flatten() {
            if next == start {
                return Some(trail.clone());
            }
            if seen.insert(next.clone()) {
                let mut longer = trail.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_file_of_core_reaches_a_file_that_reaches_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src.join("core"), &mut paths);
    let mut files = BTreeMap::new();
    let mut texts = BTreeMap::new();
    for path in paths {
        let relative = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if relative.ends_with("_tests.rs") {
            continue;
        }
        texts.insert(relative.clone(), std::fs::read_to_string(&path).unwrap());
        files.insert(module_path(&relative), relative);
    }
    assert!(
        files.len() > 20,
        "src/core/ was not found or scanned: {files:?}"
    );
    let graph: BTreeMap<String, BTreeSet<String>> = texts
        .iter()
        .map(|(relative, text)| {
            let here = module_path(relative);
            let mut found = references(&code_of(text), &here, &files);
            found.remove(relative);
            (relative.clone(), found)
        })
        .collect();
    let circles: Vec<String> = graph
        .keys()
        .filter_map(|file| circle_through(file, &graph))
        .map(|circle| circle.join(" -> "))
        .collect();
    assert!(
        circles.is_empty(),
        "files of core/ that import back into themselves (each circle listed from each of its \
         files):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_scan_sees_use_lists_inline_paths_and_module_declarations() {
    let files: BTreeMap<Vec<String>, String> = [
        "core/mod.rs",
        "core/turn/mod.rs",
        "core/turn/sampling.rs",
        "core/turn/response/mod.rs",
        "core/turn/response/state.rs",
        "core/tools/mod.rs",
        "core/tools/handle.rs",
    ]
    .into_iter()
    .map(|file| (module_path(file), file.to_string()))
    .collect();
    let here = module_path("core/turn/response/mod.rs");
    let code = code_of(
        "mod state;\n\
         use super::super::tools::{self, handle::TurnHandle};\n\
         // use super::sampling; a comment imports nothing\n\
         fn f() { super::sampling::sample_once(); }\n\
         #[cfg(test)]\nmod tests {\n use crate::core::clock::now; }\n",
    );
    assert_eq!(
        references(&code, &here, &files),
        BTreeSet::from([
            "core/turn/response/state.rs".to_string(),
            "core/tools/mod.rs".to_string(),
            "core/tools/handle.rs".to_string(),
            "core/turn/sampling.rs".to_string(),
        ]),
        "the trailing test module (which names core/mod.rs) and the comment are left out"
    );
}

#[test]
fn an_item_of_a_mod_rs_used_by_its_child_is_a_circle() {
    let sources = [
        (
            "core/turn/mod.rs",
            "mod start;\npub(crate) fn run_turn() {}\n",
        ),
        ("core/turn/start.rs", "use super::run_turn;\n"),
        ("core/turn/usage.rs", "use super::start;\n"),
    ];
    let files: BTreeMap<Vec<String>, String> = sources
        .iter()
        .map(|(file, _)| (module_path(file), file.to_string()))
        .collect();
    let graph: BTreeMap<String, BTreeSet<String>> = sources
        .iter()
        .map(|(file, text)| {
            let found = references(&code_of(text), &module_path(file), &files);
            (file.to_string(), found)
        })
        .collect();
    assert_eq!(
        circle_through("core/turn/start.rs", &graph),
        Some(vec![
            "core/turn/start.rs".to_string(),
            "core/turn/mod.rs".to_string()
        ])
    );
    assert_eq!(circle_through("core/turn/usage.rs", &graph), None);
}
