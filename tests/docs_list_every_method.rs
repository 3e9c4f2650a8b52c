//! The docs name exactly the methods openturn answers: the README's "Protocol methods" table
//! lists every method of the one table, `src/protocol/methods.rs`, and nothing else; each of them
//! is described in docs/PROTOCOL.md outside its "Not implemented" section, which names none of
//! them. Adding or removing a method without the docs fails here.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

use std::collections::BTreeSet;

use openturn::protocol::methods::CLIENT_REQUEST_METHODS;

fn read(relative: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The text of the section that starts with the heading line `heading`, up to the next heading
/// of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no `{heading}` section"))
        + 1;
    let level = heading.chars().take_while(|c| *c == '#').count();
    let body = &text[start + heading.len()..];
    let end = body
        .lines()
        .scan(0, |offset, line| {
            let at = *offset;
            *offset += line.len() + 1;
            Some((at, line))
        })
        .find(|(_, line)| {
            let hashes = line.chars().take_while(|c| *c == '#').count();
            hashes > 0 && hashes <= level && line[hashes..].starts_with(' ')
        })
        .map_or(body.len(), |(at, _)| at);
    &body[..end]
}

/// Every `code span` in `text`.
fn code_spans(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn methods() -> BTreeSet<String> {
    CLIENT_REQUEST_METHODS
        .iter()
        .map(|m| m.to_string())
        .collect()
}

#[test]
fn the_readme_methods_table_lists_exactly_the_methods_of_the_table() {
    let readme = read("README.md");
    let table = section(&readme, "## Protocol methods");
    let listed: BTreeSet<String> = table
        .lines()
        .filter(|line| line.starts_with("| `"))
        .flat_map(|line| {
            let first_cell = line.split('|').nth(1).unwrap_or_default();
            code_spans(first_cell)
        })
        .collect();
    let missing: Vec<_> = methods().difference(&listed).cloned().collect();
    let extra: Vec<_> = listed.difference(&methods()).cloned().collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "README's methods table: missing {missing:?}, not a method openturn answers {extra:?}"
    );
}

#[test]
fn protocol_md_describes_every_method_and_lists_none_as_not_implemented() {
    let protocol = read("docs/PROTOCOL.md");
    let not_implemented = section(&protocol, "## 13. Not implemented");
    let described = code_spans(&protocol.replace(not_implemented, ""));
    let undescribed: Vec<_> = methods().difference(&described).cloned().collect();
    assert!(
        undescribed.is_empty(),
        "docs/PROTOCOL.md never names {undescribed:?}"
    );
    let wrongly_missing: Vec<_> = code_spans(not_implemented)
        .intersection(&methods())
        .cloned()
        .collect();
    assert!(
        wrongly_missing.is_empty(),
        "docs/PROTOCOL.md §13 calls implemented methods not implemented: {wrongly_missing:?}"
    );
}
