//! What can be wrong with configuration. In a file of its own: both the loader (`config.rs`)
//! and the checks (`check.rs`) report it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid override `{0}`: expected key=value")]
    BadOverride(String),
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// A value of the wrong kind, with where it came from and what was expected.
    #[error("invalid value for `{key}` in {source_name}: expected {expected}; got {got}")]
    InvalidValue {
        key: String,
        source_name: String,
        expected: String,
        got: String,
    },
    #[error("unknown model provider `{0}`: add a [model_providers.{0}] table to config.toml")]
    UnknownProvider(String),
}
