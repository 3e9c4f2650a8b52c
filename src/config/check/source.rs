//! Where a configuration value came from and what checking it may warn about: the names an
//! error or warning gives so the user can find the file or flag again.

use std::fmt;
use std::path::PathBuf;

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
