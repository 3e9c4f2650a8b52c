//! Checking one configuration source (config.toml, one `-c` flag, or a `thread/start` `config`
//! object) against the keys openturn knows, before the sources are merged: a merged table can no
//! longer say where a bad value came from, and the user needs the file or flag to fix it.
//!
//! A value of the wrong kind is an error naming the key, the source, what was expected and what
//! was given. A key openturn does not know is ignored with a warning naming the closest known
//! key, since a typo (`modle`) would otherwise silently leave the setting at its default. A key
//! the Codex CLI reads but openturn does not act on is ignored with a warning saying so.
//!
//! Clients built for the reference send some of its keys with every thread (the ACP bridge:
//! `features`, `projects`, `tools`). Those are accepted silently when the reference would
//! accept them (a known feature name, a trust level, a tool switch) and kept in the merged table,
//! so `config/read` shows them; a name neither knows still warns.
//!
//! Adding a configuration key means adding it to [`TOP_LEVEL`] (or the provider or model keys)
//! with the kind of value it takes.
//!
//! Layout: [`known`] is the table of keys and kinds, [`source`] names where a value came from,
//! [`describe`] words a bad value for an error, [`closest`](mod@closest) finds the key a typo
//! meant; this file walks a source's table against them.

mod closest;
mod cloud;
mod describe;
mod known;
mod source;

use toml::{Table, Value};

use super::error::ConfigError;
use closest::closest;
use describe::{expected, shown};
use known::CODEX_ONLY_TOP_LEVEL;

pub(super) use known::{Expect, TOP_LEVEL};
pub use source::{ConfigSource, ConfigWarning};

/// What checking one source found: everything wrong with a value is an error, returned at once.
pub fn check_source(
    table: &Table,
    source: &ConfigSource,
) -> Result<Vec<ConfigWarning>, ConfigError> {
    let mut checker = Checker {
        source,
        warnings: Vec::new(),
        unknown: Vec::new(),
    };
    checker.table(table, "", TOP_LEVEL, CODEX_ONLY_TOP_LEVEL)?;
    checker.unenforced_sandbox(table);
    if let Some(summary) = cloud::cloud_skills_asked(table, source) {
        checker.warn(summary);
    }
    Ok(checker.warnings)
}

/// The dotted paths in `table` that neither openturn nor the reference knows (unknown feature
/// names included), after checking every value's kind. A write refuses them: loading only warns
/// about such a key, but a client asking to store one has most likely misspelt it, and the
/// file would keep the typo.
pub(super) fn unknown_keys(
    table: &Table,
    source: &ConfigSource,
) -> Result<Vec<String>, ConfigError> {
    let mut checker = Checker {
        source,
        warnings: Vec::new(),
        unknown: Vec::new(),
    };
    checker.table(table, "", TOP_LEVEL, CODEX_ONLY_TOP_LEVEL)?;
    Ok(checker.unknown)
}

struct Checker<'a> {
    source: &'a ConfigSource,
    warnings: Vec<ConfigWarning>,
    /// The paths of the keys found unknown, in the order met.
    unknown: Vec<String>,
}

impl Checker<'_> {
    fn table(
        &mut self,
        table: &Table,
        prefix: &str,
        known: &[(&str, Expect)],
        codex_only: &[&str],
    ) -> Result<(), ConfigError> {
        for (key, value) in table {
            let path = join(prefix, key);
            match known.iter().find(|(name, _)| name == key) {
                Some((_, expect)) => self.value(value, &path, *expect)?,
                None if codex_only.contains(&key.as_str()) => self.warn(format!(
                    "`{path}` in {} is a Codex setting that openturn does not act on; it is ignored",
                    self.source
                )),
                None => self.unknown(&path, key, known),
            }
        }
        Ok(())
    }

    fn value(&mut self, value: &Value, path: &str, expect: Expect) -> Result<(), ConfigError> {
        let fits = match (expect, value) {
            (Expect::Text, Value::String(_)) | (Expect::Bool, Value::Boolean(_)) => true,
            (Expect::NonEmptyText, Value::String(text)) => !text.trim().is_empty(),
            (Expect::Count(max), Value::Integer(n)) => u64::try_from(*n).is_ok_and(|n| n <= max),
            (Expect::Integer, Value::Integer(_)) => true,
            (Expect::Seconds, Value::Integer(n)) => *n >= 0,
            (Expect::Seconds, Value::Float(x)) => x.is_finite() && *x >= 0.0,
            (Expect::OneOf(options), Value::String(text)) => options.contains(&text.as_str()),
            (Expect::TextList, Value::Array(items)) => items.iter().all(Value::is_str),
            (Expect::TableList(keys), Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    self.value(item, &format!("{path}[{index}]"), Expect::Keys(keys, &[]))?;
                }
                return Ok(());
            }
            (Expect::Keys(keys, codex_only), Value::Table(inner)) => {
                return self.table(inner, path, keys, codex_only);
            }
            (Expect::MapOf(each), Value::Table(inner)) => {
                for (key, item) in inner {
                    self.value(item, &join(path, key), *each)?;
                }
                return Ok(());
            }
            (Expect::Features, Value::Table(inner)) => {
                for (name, item) in inner {
                    self.feature(name, item, &join(path, name))?;
                }
                return Ok(());
            }
            (Expect::Switch, Value::Boolean(_)) => true,
            // The options of a tool are the reference's; only the switch itself is checked.
            (Expect::Switch, Value::Table(options)) => {
                if let Some(enabled) = options.get("enabled") {
                    self.value(enabled, &join(path, "enabled"), Expect::Bool)?;
                }
                return Ok(());
            }
            _ => false,
        };
        if fits {
            return Ok(());
        }
        Err(ConfigError::InvalidValue {
            key: path.to_string(),
            source_name: self.source.to_string(),
            expected: expected(expect),
            got: shown(path, value),
        })
    }

    /// One `features.NAME = on/off`: a name the reference does not know is a warning (the
    /// value is still kept, as `--enable` keeps it), a value that is not on or off an error.
    fn feature(&mut self, name: &str, value: &Value, path: &str) -> Result<(), ConfigError> {
        self.value(value, path, Expect::Bool)?;
        if !super::is_known_feature(name) {
            self.unknown.push(path.to_string());
            let hint = closest(name, super::known_features())
                .map(|known| format!("; did you mean `features.{known}`?"))
                .unwrap_or_default();
            self.warn(format!(
                "unknown feature `{path}` in {} is ignored{hint}",
                self.source
            ));
        }
        Ok(())
    }

    fn unknown(&mut self, path: &str, key: &str, known: &[(&str, Expect)]) {
        self.unknown.push(path.to_string());
        let hint = closest(key, known.iter().map(|(name, _)| *name))
            .map(|name| format!("; did you mean `{}`?", join(parent(path), name)))
            .unwrap_or_default();
        self.warn(format!(
            "unknown configuration key `{path}` in {} is ignored{hint}",
            self.source
        ));
    }

    /// A sandbox mode this kernel cannot enforce: commands under it will be refused (or asked
    /// about), never run unconfined, and the user should know before the first one.
    fn unenforced_sandbox(&mut self, table: &Table) {
        let mode = match table.get("sandbox_mode").and_then(Value::as_str) {
            Some("read-only") => crate::core::SandboxMode::ReadOnly,
            Some("workspace-write") => crate::core::SandboxMode::WorkspaceWrite,
            _ => return,
        };
        let Some(reason) = crate::core::sandboxing::unsupported_mode_reason(mode) else {
            return;
        };
        self.warn(format!(
            "`sandbox_mode` in {} cannot be enforced on this machine: {reason}; commands that \
             need the sandbox will be refused (or, with approval_policy `on-request` or \
             `untrusted`, asked about and run with your full access once approved)",
            self.source
        ));
    }

    fn warn(&mut self, summary: String) {
        let path = match self.source {
            ConfigSource::File(path) => Some(path.clone()),
            _ => None,
        };
        self.warnings.push(ConfigWarning { summary, path });
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('.')
        .map(|(parent, _)| parent)
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    fn file() -> ConfigSource {
        ConfigSource::File(PathBuf::from("/x/config.toml"))
    }

    #[test]
    fn a_bad_value_names_key_source_expectation_and_value() {
        let error = check_source(&table("approval_policy = \"sometimes\""), &file())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "invalid value for `approval_policy` in /x/config.toml: expected one of \
                 untrusted, on-request, never; got \"sometimes\""
            )
        );
        let flag = ConfigSource::Flag("model_providers.p.request_max_retries=-1".into());
        let error = check_source(
            &table("[model_providers.p]\nrequest_max_retries = -1"),
            &flag,
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "invalid value for `model_providers.p.request_max_retries` in \
                 `-c model_providers.p.request_max_retries=-1`: expected a whole number from 0 \
                 to 4294967295; got -1"
            )
        );
    }

    #[test]
    fn typos_warn_with_the_closest_known_key() {
        let warnings = check_source(
            &table("modle = \"x\"\n[model_providers.p]\nbas_url = \"http://h\"\nzzz = 1"),
            &file(),
        )
        .unwrap();
        let summaries: Vec<&str> = warnings.iter().map(|w| w.summary.as_str()).collect();
        assert_eq!(
            summaries,
            vec![
                "unknown configuration key `model_providers.p.bas_url` in /x/config.toml is \
                 ignored; did you mean `model_providers.p.base_url`?",
                "unknown configuration key `model_providers.p.zzz` in /x/config.toml is ignored",
                "unknown configuration key `modle` in /x/config.toml is ignored; did you mean \
                 `model`?",
            ]
        );
        assert!(warnings
            .iter()
            .all(|w| w.path == Some(PathBuf::from("/x/config.toml"))));
    }

    /// Features are checked like any setting: the reference's names pass silently (openturn acts
    /// on `apply_patch_streaming_events`), a value that is not on or off is an error naming it,
    /// and an unknown name warns.
    #[test]
    fn features_are_booleans_and_only_unknown_names_warn() {
        let text = "[features]\napply_patch_streaming_events = true\ngoals = true\ngaols = true";
        let warnings = check_source(&table(text), &file()).unwrap();
        let summaries: Vec<&str> = warnings.iter().map(|w| w.summary.as_str()).collect();
        assert_eq!(summaries.len(), 1, "{summaries:?}");
        assert!(summaries[0].contains("`features.gaols`"), "{summaries:?}");
        let error = check_source(
            &table("[features]\napply_patch_streaming_events = \"yes\""),
            &file(),
        )
        .err()
        .map(|e| e.to_string());
        assert!(
            error.as_deref().is_some_and(|e| e.contains(
                "invalid value for `features.apply_patch_streaming_events` in /x/config.toml"
            )),
            "{error:?}"
        );
    }

    #[test]
    fn mcp_server_keys_are_checked_by_kind_and_env_values_are_not_echoed() {
        let error = |text: &str| {
            check_source(&table(text), &file())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            error("[mcp_servers.docs]\ncommand = \"d\"\nstartup_timeout_sec = \"ten\""),
            "invalid value for `mcp_servers.docs.startup_timeout_sec` in /x/config.toml: \
             expected a number of seconds, 0 or more; got \"ten\""
        );
        let env = error("[mcp_servers.docs]\ncommand = \"d\"\nenv = { TOKEN = 12345 }");
        assert!(env.contains("`mcp_servers.docs.env.TOKEN`"), "{env}");
        assert!(!env.contains("12345"), "{env}");
        assert!(error("[mcp_servers.docs]\nargs = \"--stdio\"").contains("an array of strings"));
        let warnings = check_source(
            &table("[mcp_servers.docs]\ncommand = \"d\"\ntool_timout_sec = 5\nrequired = true"),
            &file(),
        )
        .unwrap_or_default();
        let summaries: Vec<&str> = warnings.iter().map(|w| w.summary.as_str()).collect();
        assert!(
            summaries
                .iter()
                .any(|s| s.contains("`mcp_servers.docs.tool_timout_sec`")
                    && s.contains("did you mean `mcp_servers.docs.tool_timeout_sec`?")),
            "{summaries:?}"
        );
        assert_eq!(summaries.len(), 2, "{summaries:?}");
    }

    #[test]
    fn secret_values_are_not_echoed() {
        let error = check_source(
            &table("[model_providers.p]\nhttp_headers = \"Bearer sk-live-123\""),
            &file(),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            error.contains("`model_providers.p.http_headers`"),
            "{error}"
        );
        assert!(!error.contains("sk-live-123"), "{error}");
    }
}
