//! The layer rules of docs/ARCHITECTURE.md §1, enforced: a module may only reach the layers below it.
//! Scans every `crate::<module>` path in `src/` (in `use` lines and inline paths alike).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

#[path = "support/source_tree.rs"]
mod source_tree;
use source_tree::rust_files;

use std::collections::BTreeSet;
use std::path::Path;

/// (layer, the crate modules it may use). A layer may always use itself.
const ALLOWED: &[(&str, &[&str])] = &[
    ("wire", &[]),
    ("protocol", &[]),
    ("sandbox", &[]),
    ("supervisor", &[]),
    ("mock_provider", &[]),
    ("client", &["wire"]),
    ("rollout", &["wire"]),
    ("mcp", &["supervisor"]),
    (
        "core",
        &["wire", "client", "rollout", "sandbox", "mcp", "supervisor"],
    ),
    (
        "server",
        &[
            "protocol",
            "core",
            "rollout",
            "config",
            "sandbox",
            "mcp",
            "supervisor",
        ],
    ),
    ("config", &["client", "core", "mcp"]),
    ("demo", &["mock_provider"]),
    ("exec", &["server", "protocol"]),
];

/// The top-level crate modules a source text refers to through `crate::`.
fn crate_references(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(index) = rest.find("crate::") {
            rest = &rest[index + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                // `use crate::{a, b}` — take every name in the braces.
                if let Some(inner) = rest.strip_prefix('{') {
                    let end = inner.find('}').unwrap_or(inner.len());
                    for part in inner[..end].split(',') {
                        let head: String = part
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if !head.is_empty() {
                            found.insert(head);
                        }
                    }
                }
            } else {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut checked = 0;
    for (layer, allowed) in ALLOWED {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        let single = src.join(format!("{layer}.rs"));
        if single.exists() {
            files.push(single);
        }
        for file in files {
            checked += 1;
            let text = std::fs::read_to_string(&file).unwrap();
            for module in crate_references(&text) {
                if module != *layer && !allowed.contains(&module.as_str()) {
                    violations.push(format!("{} uses crate::{module}", file.display()));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "scanned only {checked} files; is the layout intact?"
    );
    assert!(
        violations.is_empty(),
        "forbidden layer edges:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_scanner_sees_braced_and_inline_paths() {
    let refs = crate_references(
        "use crate::{wire::x, core};\nlet a = crate::server::f(); // crate::demo\n",
    );
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        vec!["core".to_string(), "server".to_string(), "wire".to_string()]
    );
}
