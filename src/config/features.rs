//! The feature flags openturn acts on (`[features]` in config.toml, `--enable`/`--disable`,
//! `experimentalFeature/*`), and their process-wide runtime enablement.
//!
//! A flag's state is, highest first: what `experimentalFeature/enablement/set` set while the
//! daemon runs (kept in memory, gone at exit), then `features.NAME` in the configuration, then
//! the flag's default. Only flags in [`FEATURES`] are listed or set at runtime: the reference
//! knows many more names (`src/reference_features.txt`), which config.toml may hold, but listing
//! them would show switches that change nothing here.

use std::collections::BTreeMap;
use std::sync::Mutex;

use toml::Value;

/// A flag's lifecycle stage, as the reference names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureStage {
    Beta,
    UnderDevelopment,
    Stable,
}

impl FeatureStage {
    pub fn as_str(self) -> &'static str {
        match self {
            FeatureStage::Beta => "beta",
            FeatureStage::UnderDevelopment => "underDevelopment",
            FeatureStage::Stable => "stable",
        }
    }
}

/// One flag openturn acts on.
#[derive(Debug, Clone, Copy)]
pub struct FeatureSpec {
    pub name: &'static str,
    pub stage: FeatureStage,
    pub default_enabled: bool,
    /// For a beta flag's toggle in a client's settings.
    pub display_name: &'static str,
    pub description: &'static str,
}

/// Every flag openturn acts on, in listing order. Adding a flag that changes behaviour means a
/// row here and reading it with [`super::Config::feature_enabled`].
pub const FEATURES: &[FeatureSpec] = &[FeatureSpec {
    name: "apply_patch_streaming_events",
    stage: FeatureStage::UnderDevelopment,
    default_enabled: false,
    display_name: "Patch previews",
    description: "Show a patch's files to the client while the model is still writing it.",
}];

/// What `experimentalFeature/enablement/set` set, by name.
static RUNTIME: Mutex<BTreeMap<String, bool>> = Mutex::new(BTreeMap::new());

fn runtime() -> std::sync::MutexGuard<'static, BTreeMap<String, bool>> {
    match RUNTIME.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The flag named `name`, when openturn acts on it.
pub fn feature(name: &str) -> Option<&'static FeatureSpec> {
    FEATURES.iter().find(|spec| spec.name == name)
}

/// Sets the flags openturn acts on for the rest of this process (threads started from now on
/// see them) and returns those it set; other names are left out, as the reference leaves out
/// what it cannot set at runtime.
pub fn set_runtime(enablement: &BTreeMap<String, bool>) -> BTreeMap<String, bool> {
    let mut runtime = runtime();
    let mut applied = BTreeMap::new();
    for (name, on) in enablement {
        if feature(name).is_some() {
            runtime.insert(name.clone(), *on);
            applied.insert(name.clone(), *on);
        }
    }
    applied
}

/// Whether flag `name` is on for a configuration whose merged table is `table`.
pub(super) fn enabled_in(table: &toml::Table, name: &str) -> bool {
    if let Some(on) = runtime().get(name) {
        return *on;
    }
    let configured = table
        .get("features")
        .and_then(|features| features.get(name))
        .and_then(Value::as_bool);
    configured.unwrap_or_else(|| feature(name).is_some_and(|spec| spec.default_enabled))
}
