//! `shell_environment_policy`: the environment the model's commands and `command/exec` get, as
//! the reference defines it, plus one step of openturn's own.
//!
//! 1. Start from the daemon's variables: all of them (`inherit = "all"`, the default), the core
//!    ones (`"core"`: HOME, LOGNAME, PATH, SHELL, USER, USERNAME, TMPDIR, TEMP, TMP), or none.
//! 2. Unless `ignore_default_excludes` (true by default, as in the reference), drop every name
//!    matching `*KEY*`, `*SECRET*` or `*TOKEN*`.
//! 3. Drop every name matching a pattern of `exclude`.
//! 4. openturn's step: drop the variables that hold the keys openturn itself uses (each
//!    provider's `env_key`, `OPENAI_API_KEY`, MCP servers' `bearer_token_env_var`), unless
//!    `include_only` names one exactly or `set` sets it. A command's output goes to the model and
//!    into the rollout, so `env` must not be a way to copy the key there.
//! 5. Add `set`.
//! 6. When `include_only` is not empty, keep only the names matching one of its patterns.
//!
//! Patterns are globs matched without regard to case: `*` any run of characters, `?` one.

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde::Deserialize;

/// The names `inherit = "core"` keeps.
const CORE_VARIABLES: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
];

/// What step 2 drops.
const DEFAULT_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*"];

/// Where a command's environment starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvironmentInherit {
    #[default]
    All,
    Core,
    None,
}

/// `[shell_environment_policy]`, and the key variables openturn strips (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ShellEnvironmentPolicy {
    pub inherit: EnvironmentInherit,
    pub ignore_default_excludes: bool,
    pub exclude: Vec<String>,
    pub set: BTreeMap<String, String>,
    pub include_only: Vec<String>,
    /// The variables holding keys openturn uses; filled from the configuration, not read from
    /// the policy table.
    #[serde(skip)]
    pub key_variables: Vec<String>,
}

impl Default for ShellEnvironmentPolicy {
    fn default() -> Self {
        ShellEnvironmentPolicy {
            inherit: EnvironmentInherit::All,
            ignore_default_excludes: true,
            exclude: Vec::new(),
            set: BTreeMap::new(),
            include_only: Vec::new(),
            key_variables: vec!["OPENAI_API_KEY".to_string()],
        }
    }
}

impl ShellEnvironmentPolicy {
    /// The environment for a command, from the daemon's own.
    pub fn environment(&self) -> Vec<(OsString, OsString)> {
        self.apply(std::env::vars_os())
    }

    /// The environment for a command, from `vars` (the steps of the module doc).
    pub fn apply(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut env: BTreeMap<OsString, OsString> = vars
            .into_iter()
            .filter(|(name, _)| match self.inherit {
                EnvironmentInherit::All => true,
                EnvironmentInherit::Core => name
                    .to_str()
                    .is_some_and(|name| CORE_VARIABLES.contains(&name)),
                EnvironmentInherit::None => false,
            })
            .collect();
        let matches_any = |patterns: &[&str], name: &OsString| {
            let name = name.to_string_lossy();
            patterns.iter().any(|pattern| glob_matches(pattern, &name))
        };
        if !self.ignore_default_excludes {
            env.retain(|name, _| !matches_any(DEFAULT_EXCLUDES, name));
        }
        let exclude: Vec<&str> = self.exclude.iter().map(String::as_str).collect();
        env.retain(|name, _| !matches_any(&exclude, name));
        env.retain(|name, _| !self.strips_key(&name.to_string_lossy()));
        for (name, value) in &self.set {
            env.insert(name.into(), value.into());
        }
        if !self.include_only.is_empty() {
            let include: Vec<&str> = self.include_only.iter().map(String::as_str).collect();
            env.retain(|name, _| matches_any(&include, name));
        }
        env.into_iter().collect()
    }

    /// Whether `name` holds a key openturn uses and the policy does not name it exactly.
    fn strips_key(&self, name: &str) -> bool {
        self.key_variables.iter().any(|key| key == name)
            && !self
                .include_only
                .iter()
                .any(|pattern| pattern.eq_ignore_ascii_case(name))
    }
}

/// Whether `name` matches `pattern` (`*` any run, `?` one character), ignoring case.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.to_lowercase().chars().collect();
    let name: Vec<char> = name.to_lowercase().chars().collect();
    // The classic greedy match with one backtrack point: the last `*` and where it resumed.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    const DAEMON: &[(&str, &str)] = &[
        ("PATH", "/bin"),
        ("HOME", "/root"),
        ("OPENAI_API_KEY", "sk-1"),
        ("MOCK_KEY", "sk-2"),
        ("GITHUB_TOKEN", "gh"),
        ("AWS_REGION", "x"),
        ("CI", "1"),
    ];

    fn policy() -> ShellEnvironmentPolicy {
        ShellEnvironmentPolicy {
            key_variables: vec!["OPENAI_API_KEY".into(), "MOCK_KEY".into()],
            ..ShellEnvironmentPolicy::default()
        }
    }

    #[test]
    fn by_default_everything_but_openturns_own_keys_is_inherited() {
        assert_eq!(
            names(&policy().apply(vars(DAEMON))),
            ["AWS_REGION", "CI", "GITHUB_TOKEN", "HOME", "PATH"]
        );
    }

    #[test]
    fn default_excludes_exclude_set_and_include_only_apply_in_order() {
        let strict = ShellEnvironmentPolicy {
            ignore_default_excludes: false,
            exclude: vec!["aws_*".into()],
            set: BTreeMap::from([("EXTRA_TOKEN".into(), "set".into())]),
            ..policy()
        };
        // `set` comes after the excludes, so a set variable survives them.
        assert_eq!(
            names(&strict.apply(vars(DAEMON))),
            ["CI", "EXTRA_TOKEN", "HOME", "PATH"]
        );
        let core = ShellEnvironmentPolicy {
            inherit: EnvironmentInherit::Core,
            ..policy()
        };
        assert_eq!(names(&core.apply(vars(DAEMON))), ["HOME", "PATH"]);
        let none = ShellEnvironmentPolicy {
            inherit: EnvironmentInherit::None,
            set: BTreeMap::from([("A".into(), "1".into())]),
            ..policy()
        };
        assert_eq!(names(&none.apply(vars(DAEMON))), ["A"]);
        let only = ShellEnvironmentPolicy {
            include_only: vec!["p?th".into(), "openai_api_key".into(), "MOCK*".into()],
            ..policy()
        };
        // Named exactly, the key passes; matched by a wildcard only, it does not.
        assert_eq!(names(&only.apply(vars(DAEMON))), ["OPENAI_API_KEY", "PATH"]);
    }

    #[test]
    fn globs_match_without_case_and_backtrack() {
        for (pattern, name) in [
            ("*KEY*", "openai_api_key"),
            ("*", ""),
            ("a*b*c", "axxbyyc"),
            ("a*c", "abcbc"),
            ("?", "x"),
        ] {
            assert!(glob_matches(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [("*KEY", "KEYS"), ("a?", "a"), ("abc", "abd"), ("a*c", "ab")] {
            assert!(!glob_matches(pattern, name), "{pattern} {name}");
        }
    }
}
