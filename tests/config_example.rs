//! `docs/config.example.toml` names every key openturn reads, and nothing else: with its settings
//! uncommented it is valid TOML, every key of `openturn::config::known_keys()` appears in it, each
//! of its keys is a known one, and openturn loads it without an error or an unknown-key warning.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

use std::collections::BTreeSet;

use openturn::config::{known_keys, Config};
use toml::{Table, Value};

const EXAMPLE: &str = include_str!("../docs/config.example.toml");

/// The example with its settings uncommented: a line `#key = …` or `#[table]` loses its `#`;
/// prose comments (`# …`, with a space) stay.
fn uncommented() -> String {
    EXAMPLE
        .lines()
        .map(|line| match line.strip_prefix('#') {
            Some(rest) if rest.starts_with(|c: char| c == '[' || c.is_ascii_alphabetic()) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tables whose keys are names the user chooses.
const NAMED: [&str; 4] = ["model_providers", "models", "mcp_servers", "projects"];

/// The example's keys as `known_keys` spells them (`*` for a chosen name, `[]` for an array
/// entry); a table that is itself a known key (a map such as `query_params`) is one key.
fn keys_of(table: &Table, prefix: &str, known: &BTreeSet<String>, out: &mut BTreeSet<String>) {
    for (key, value) in table {
        let path = match prefix {
            "" => key.clone(),
            _ if NAMED.contains(&prefix) => format!("{prefix}.*"),
            _ => format!("{prefix}.{key}"),
        };
        match value {
            _ if known.contains(&path) => {
                out.insert(path);
            }
            Value::Table(inner) if NAMED.contains(&path.as_str()) => {
                for (name, entry) in inner {
                    let mut one = Table::new();
                    one.insert(name.clone(), entry.clone());
                    keys_of(&one, &path, known, out);
                }
            }
            Value::Table(inner) => keys_of(inner, &path, known, out),
            Value::Array(items) if items.iter().all(Value::is_table) && !items.is_empty() => {
                for item in items {
                    keys_of(item.as_table().unwrap(), &format!("{path}[]"), known, out);
                }
            }
            _ => {
                out.insert(path);
            }
        }
    }
}

#[test]
fn the_example_config_names_every_key_and_only_known_ones() {
    let table: Table = uncommented()
        .parse()
        .unwrap_or_else(|error| panic!("the uncommented example is not TOML: {error}"));
    let known: BTreeSet<String> = known_keys().into_iter().collect();
    let mut found = BTreeSet::new();
    keys_of(&table, "", &known, &mut found);
    let missing: Vec<&String> = known.difference(&found).collect();
    assert!(
        missing.is_empty(),
        "keys the example does not show: {missing:?}"
    );
    let unknown: Vec<&String> = found.difference(&known).collect();
    assert!(
        unknown.is_empty(),
        "keys openturn does not read: {unknown:?}"
    );
}

#[test]
fn openturn_loads_the_uncommented_example_without_complaint() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), uncommented()).unwrap();
    let config = Config::load(home.path(), &[]).unwrap_or_else(|error| panic!("{error}"));
    let complaints: Vec<&str> = config
        .warnings
        .iter()
        .map(|warning| warning.summary.as_str())
        // Whether this kernel enforces the sandbox is the machine's business, not the file's.
        .filter(|summary| !summary.contains("cannot be enforced on this machine"))
        .collect();
    assert!(complaints.is_empty(), "{complaints:#?}");
    assert_eq!(config.model_provider_id, "local");
    assert_eq!(
        config.provider("local").unwrap().base_url,
        "http://127.0.0.1:11434/v1"
    );
}
