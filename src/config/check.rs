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

use std::fmt;
use std::path::PathBuf;

use toml::{Table, Value};

use super::error::ConfigError;

/// Where a value came from, as the user would find it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    File(PathBuf),
    /// One `-c key=value` flag, as given.
    Flag(String),
    /// The `config` object of a `thread/start` (or resume, fork) request.
    ThreadConfig,
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::File(path) => write!(f, "{}", path.display()),
            ConfigSource::Flag(raw) => write!(f, "`-c {raw}`"),
            ConfigSource::ThreadConfig => write!(f, "the request's `config`"),
        }
    }
}

/// Configuration that was accepted but is not acted on as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    pub summary: String,
    /// The file the setting is in, when it came from one.
    pub path: Option<PathBuf>,
}

/// The kind of value a key takes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Expect {
    Text,
    NonEmptyText,
    Bool,
    /// A whole number from 0 up to the given maximum.
    Count(u64),
    Integer,
    OneOf(&'static [&'static str]),
    TextList,
    /// An array of tables (`[[name]]`), each with the given keys.
    TableList(&'static [(&'static str, Expect)]),
    /// A table whose keys are known, and the keys Codex reads there that openturn ignores.
    Keys(&'static [(&'static str, Expect)], &'static [&'static str]),
    /// A table of any keys, each value of one kind.
    MapOf(&'static Expect),
    /// A duration in seconds: a whole or fractional number, not negative.
    Seconds,
    /// `[features]`: the reference's feature names (`--enable`/`--disable`), each on or off.
    Features,
    /// A tool switch (`[tools] web_search = …`): on or off, or a table of the tool's options
    /// whose `enabled`, when given, is on or off.
    Switch,
}

const U32: Expect = Expect::Count(u32::MAX as u64);
const U64: Expect = Expect::Count(i64::MAX as u64);

const PROVIDER_KEYS: &[(&str, Expect)] = &[
    ("name", Expect::Text),
    ("base_url", Expect::NonEmptyText),
    ("env_key", Expect::Text),
    (
        "wire_api",
        Expect::OneOf(&["responses", "responses_websocket"]),
    ),
    ("query_params", Expect::MapOf(&Expect::Text)),
    ("http_headers", Expect::MapOf(&Expect::Text)),
    ("env_http_headers", Expect::MapOf(&Expect::Text)),
    ("api_key_header", Expect::Text),
    ("request_max_retries", U32),
    ("stream_max_retries", U32),
    ("stream_idle_timeout_ms", U64),
    ("requires_openai_auth", Expect::Bool),
];

const MODEL_KEYS: &[(&str, Expect)] = &[
    ("display_name", Expect::Text),
    ("description", Expect::Text),
    ("hidden", Expect::Bool),
    ("default_reasoning_effort", Expect::Text),
    ("supported_reasoning_efforts", Expect::TextList),
    ("input_modalities", Expect::TextList),
    ("model_provider", Expect::Text),
    ("supports_reasoning", Expect::Bool),
    ("default_reasoning_summary", Expect::Text),
    ("apply_patch_tool_type", APPLY_PATCH_TOOL_TYPE),
    ("tools", Expect::TextList),
];

/// One `[mcp_servers.NAME]` table: a stdio server (`command`) or a streamable HTTP one (`url`).
const MCP_SERVER_KEYS: &[(&str, Expect)] = &[
    ("command", Expect::NonEmptyText),
    ("args", Expect::TextList),
    ("env", Expect::MapOf(&Expect::Text)),
    ("cwd", Expect::NonEmptyText),
    ("url", Expect::NonEmptyText),
    ("bearer_token_env_var", Expect::NonEmptyText),
    ("http_headers", Expect::MapOf(&Expect::Text)),
    ("enabled", Expect::Bool),
    ("startup_timeout_sec", Expect::Seconds),
    ("tool_timeout_sec", Expect::Seconds),
    ("enabled_tools", Expect::TextList),
    ("disabled_tools", Expect::TextList),
];

/// Keys the Codex CLI reads in an MCP server table that openturn accepts and ignores.
const CODEX_ONLY_MCP_SERVER: &[&str] = &[
    "env_vars",
    "env_http_headers",
    "required",
    "startup_timeout_ms",
    "scopes",
    "oauth_resource",
    "default_tools_approval_mode",
    "tools",
    "experimental_environment",
];

/// How the `apply_patch` tool is offered (the reference's model-catalogue field name).
const APPLY_PATCH_TOOL_TYPE: Expect = Expect::OneOf(&["freeform", "function"]);

/// One `[[skills.config]]` entry: which skill (by name or path) and whether it is on.
const SKILL_TOGGLE_KEYS: &[(&str, Expect)] = &[
    ("name", Expect::Text),
    ("path", Expect::Text),
    ("enabled", Expect::Bool),
];

/// One `[projects."<path>"]` table: how far the reference trusts the folder.
const PROJECT_KEYS: &[(&str, Expect)] =
    &[("trust_level", Expect::OneOf(&["trusted", "untrusted"]))];

/// `[tools]`: the reference's switches for its optional tools.
/// `[tools]`: a switch for every tool a model may be offered (`core/tool_set.rs`).
const TOOL_KEYS: &[(&str, Expect)] = &[
    ("exec_command", Expect::Switch),
    ("write_stdin", Expect::Switch),
    ("update_plan", Expect::Switch),
    ("request_user_input", Expect::Switch),
    // The reference's name for the `request_user_input` switch (`core/tool_set.rs`).
    ("experimental_request_user_input", Expect::Switch),
    ("apply_patch", Expect::Switch),
    ("view_image", Expect::Switch),
    ("multi_agent_v1", Expect::Switch),
    ("get_goal", Expect::Switch),
    ("create_goal", Expect::Switch),
    ("update_goal", Expect::Switch),
    ("tool_search", Expect::Switch),
    ("web_search", Expect::Switch),
];

pub(super) const TOP_LEVEL: &[(&str, Expect)] = &[
    ("model", Expect::NonEmptyText),
    ("features", Expect::Features),
    ("projects", Expect::MapOf(&Expect::Keys(PROJECT_KEYS, &[]))),
    ("tools", Expect::Keys(TOOL_KEYS, &[])),
    ("model_provider", Expect::NonEmptyText),
    ("openai_base_url", Expect::NonEmptyText),
    (
        "skills",
        Expect::Keys(
            &[
                ("config", Expect::TableList(SKILL_TOGGLE_KEYS)),
                ("include_instructions", Expect::Bool),
            ],
            &[],
        ),
    ),
    ("cloud", super::skill_keys::CLOUD),
    (
        "model_providers",
        Expect::MapOf(&Expect::Keys(PROVIDER_KEYS, CODEX_ONLY_PROVIDER)),
    ),
    ("models", Expect::MapOf(&Expect::Keys(MODEL_KEYS, &[]))),
    (
        "mcp_servers",
        Expect::MapOf(&Expect::Keys(MCP_SERVER_KEYS, CODEX_ONLY_MCP_SERVER)),
    ),
    (
        "approval_policy",
        Expect::OneOf(&["untrusted", "on-request", "never"]),
    ),
    (
        "sandbox_mode",
        Expect::OneOf(&["read-only", "workspace-write", "danger-full-access"]),
    ),
    (
        "sandbox_workspace_write",
        Expect::Keys(
            &[
                ("writable_roots", Expect::TextList),
                ("network_access", Expect::Bool),
            ],
            &["exclude_tmpdir_env_var", "exclude_slash_tmp"],
        ),
    ),
    (
        "sandbox_isolation",
        Expect::OneOf(&["auto", "namespaces", "fallback"]),
    ),
    (
        "shell_environment_policy",
        Expect::Keys(
            &[
                ("inherit", Expect::OneOf(&["all", "core", "none"])),
                ("ignore_default_excludes", Expect::Bool),
                ("exclude", Expect::TextList),
                ("set", Expect::MapOf(&Expect::Text)),
                ("include_only", Expect::TextList),
            ],
            &["experimental_use_profile", "filters"],
        ),
    ),
    ("instructions", Expect::Text),
    ("developer_instructions", Expect::Text),
    ("model_reasoning_effort", Expect::Text),
    ("model_reasoning_summary", Expect::Text),
    ("model_context_window", Expect::Integer),
    ("show_raw_agent_reasoning", Expect::Bool),
    (
        "reasoning_summary_mode",
        Expect::OneOf(&["streaming", "sequential_cutoff"]),
    ),
    ("max_line_bytes", U64),
    ("max_sampling_requests_per_turn", U32),
    ("thread_unload_delay_secs", U64),
    ("ingress_queue_capacity", U64),
    ("project_doc_max_bytes", U64),
    ("model_auto_compact_token_limit", U64),
    ("compact_prompt", Expect::NonEmptyText),
    ("apply_patch_tool_type", APPLY_PATCH_TOOL_TYPE),
    (
        "web_search",
        Expect::OneOf(&["disabled", "cached", "live", "indexed"]),
    ),
];

/// Settings the Codex CLI reads that openturn accepts and ignores (a config.toml shared with
/// Codex should not stop openturn), each said once so the user knows it has no effect here.
const CODEX_ONLY_TOP_LEVEL: &[&str] = &[
    "profile",
    "profiles",
    "model_verbosity",
    "model_max_output_tokens",
    "hide_agent_reasoning",
    "history",
    "file_opener",
    "notify",
    "tui",
    "otel",
    "preferred_auth_method",
    "forced_login_method",
    "chatgpt_base_url",
    "disable_response_storage",
    "model_supports_reasoning_summaries",
    "experimental_instructions_file",
    "review_model",
    "service_tier",
    "personality",
];

const CODEX_ONLY_PROVIDER: &[&str] = &["experimental_bearer_token", "supports_websockets"];

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
    if let Some(summary) = super::skill_keys::cloud_skills_asked(table, source) {
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

fn expected(expect: Expect) -> String {
    match expect {
        Expect::Text => "a string".to_string(),
        Expect::NonEmptyText => "a non-empty string".to_string(),
        Expect::Bool => "true or false".to_string(),
        Expect::Count(max) => format!("a whole number from 0 to {max}"),
        Expect::Integer => "a whole number".to_string(),
        Expect::Seconds => "a number of seconds, 0 or more".to_string(),
        Expect::OneOf(options) => format!("one of {}", options.join(", ")),
        Expect::TextList => "an array of strings".to_string(),
        Expect::TableList(_) => "an array of tables".to_string(),
        Expect::Keys(..) | Expect::MapOf(_) | Expect::Features => "a table".to_string(),
        Expect::Switch => "true or false, or a table of the tool's options".to_string(),
    }
}

/// The value as TOML, short, and never the value of a key that may hold a secret (a header
/// value or anything named like a key or token): the error goes to stderr and to clients.
fn shown(path: &str, value: &Value) -> String {
    let secret = path.split('.').any(|part| {
        let part = part.to_ascii_lowercase();
        part == "http_headers"
            || part == "env"
            || ["key", "token", "secret", "password", "authorization"]
                .iter()
                .any(|word| part.contains(word) && part != "env_key")
    });
    if secret {
        return "a value (not shown)".to_string();
    }
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// The known key nearest to `key` by edit distance (a swap of two neighbours counts once), if
/// it is near enough to be a typo: at most 1 edit for short keys, 2 from four letters on.
fn closest<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = if key.chars().count() >= 4 { 2 } else { 1 };
    known
        .map(|name| (edit_distance(key, name), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        rows[at(i, 0)] = i;
    }
    for j in 0..=b.len() {
        rows[at(0, j)] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[at(i - 1, j)] + 1)
                .min(rows[at(i, j - 1)] + 1)
                .min(rows[at(i - 1, j - 1)] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[at(i - 2, j - 2)] + 1);
            }
            rows[at(i, j)] = best;
        }
    }
    rows[at(a.len(), b.len())]
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn edit_distance_counts_a_swap_once() {
        assert_eq!(edit_distance("modle", "model"), 1);
        assert_eq!(edit_distance("bas_url", "base_url"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
