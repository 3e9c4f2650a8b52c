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
    /// A provider table that does not say where to send (it would go to OpenAI by default).
    #[error(
        "{table} in {source_name} has no `base_url`: without it its requests would go to OpenAI; \
         set base_url to the provider's address (for a local server e.g. \"http://127.0.0.1:11434/v1\")"
    )]
    ProviderWithoutBaseUrl { table: String, source_name: String },
    /// `demo` was chosen for one thread, but the daemon did not start the demo provider.
    #[error(
        "the built-in `demo` provider was not started: it runs when openturn starts with \
         model_provider = \"demo\" (`openturn -c model_provider=demo …` or config.toml)"
    )]
    DemoNotStarted,
}
