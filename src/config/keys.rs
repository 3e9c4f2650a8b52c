//! The list of every key config.toml may hold, read from the same tables the checker uses
//! ([`super::check`]), so documentation (`docs/config.example.toml`) can be tested against it
//! and never falls behind a new key.

use super::check::{Expect, TOP_LEVEL};

/// Every key openturn acts on, as a dotted path: `*` stands for a name the user chooses
/// (`model_providers.*.base_url`), `[]` for an entry of an array of tables
/// (`skills.config[].enabled`). Codex settings openturn ignores are not listed.
pub fn known_keys() -> Vec<String> {
    let mut keys = Vec::new();
    collect("", TOP_LEVEL, &mut keys);
    keys
}

fn collect(prefix: &str, known: &[(&str, Expect)], keys: &mut Vec<String>) {
    for (name, expect) in known {
        let path = if prefix.is_empty() {
            (*name).to_string()
        } else {
            format!("{prefix}.{name}")
        };
        match expect {
            Expect::Keys(inner, _) => collect(&path, inner, keys),
            Expect::MapOf(Expect::Keys(inner, _)) => collect(&format!("{path}.*"), inner, keys),
            Expect::TableList(inner) => collect(&format!("{path}[]"), inner, keys),
            _ => keys.push(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_tables_are_listed_by_their_leaves() {
        let keys = known_keys();
        for key in [
            "model",
            "model_providers.*.base_url",
            "models.*.supports_reasoning",
            "mcp_servers.*.command",
            "sandbox_workspace_write.writable_roots",
            "skills.config[].enabled",
            "model_providers.*.query_params",
        ] {
            assert!(keys.iter().any(|k| k == key), "{key} missing from {keys:?}");
        }
        assert!(!keys.iter().any(|k| k == "model_providers"), "{keys:?}");
    }
}
