//! The reference CLI's feature names (`src/reference_features.txt`), which config.toml may
//! hold, and `--enable`/`--disable` turned into the `features.NAME` overrides they stand for.

/// The reference's feature names (see `src/reference_features.txt`).
const REFERENCE_FEATURES: &str = include_str!("../reference_features.txt");

/// Whether `name` is a feature the reference CLI knows.
pub fn is_known_feature(name: &str) -> bool {
    known_features().any(|known| known == name)
}

/// Every feature name the reference CLI knows.
pub(crate) fn known_features() -> impl Iterator<Item = &'static str> {
    REFERENCE_FEATURES
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(str::trim)
        .filter(|line| !line.is_empty())
}

/// `--enable NAME` / `--disable NAME` as the `-c features.NAME=true|false` overrides they stand
/// for (enables first, so `--disable` wins for a name given both ways), plus a warning for each
/// name the reference does not know. An unknown name is still set: a later openturn may read
/// it, and nothing reads it wrongly now.
pub fn feature_overrides(enable: &[String], disable: &[String]) -> (Vec<String>, Vec<String>) {
    let mut overrides = Vec::new();
    let mut warnings = Vec::new();
    let flags = enable
        .iter()
        .map(|name| (name, true))
        .chain(disable.iter().map(|name| (name, false)));
    for (name, on) in flags {
        let name = name.trim();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            warnings.push(format!(
                "ignoring feature flag `{name}`: a feature name is letters, digits, `_` or `-`"
            ));
            continue;
        }
        if !is_known_feature(name) {
            warnings.push(format!(
                "unknown feature `{name}`: setting features.{name} anyway"
            ));
        }
        overrides.push(format!("features.{name}={on}"));
    }
    (overrides, warnings)
}

#[cfg(test)]
mod feature_flag_tests {
    use super::*;

    #[test]
    fn enable_and_disable_become_overrides_and_unknown_names_warn() {
        let (overrides, warnings) = feature_overrides(
            &["goals".to_string(), "no_such_feature".to_string()],
            &["goals".to_string(), "bad name".to_string()],
        );
        assert_eq!(
            overrides,
            vec![
                "features.goals=true",
                "features.no_such_feature=true",
                "features.goals=false"
            ]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("no_such_feature"));
        assert!(warnings[1].contains("bad name"));
        assert!(is_known_feature("fast_mode"));
        assert!(!is_known_feature("# Feature names"));
    }
}
