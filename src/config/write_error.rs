//! What a config.toml write is asked to do with an existing key, and why one is refused: shared by
//! the writer (`super::write`) and the document edit (`super::write_edit`), so neither imports
//! the other back.

use std::path::PathBuf;

/// How a written value meets what is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeStrategy {
    /// The value takes the key's place entirely.
    Replace,
    /// An object is merged into an existing table key by key; anything else replaces.
    Upsert,
}

/// Why a write was refused; nothing was written in any case.
#[derive(Debug, thiserror::Error)]
pub enum ConfigWriteError {
    /// The reference's words: clients show them.
    #[error("Configuration was modified since last read. Fetch latest version and retry.")]
    VersionConflict,
    #[error("Only writes to the user config are allowed")]
    Readonly,
    #[error("{0}")]
    Validation(String),
    #[error(
        "unknown configuration key `{0}`: neither openturn nor Codex reads it, so it is not \
         written (check its spelling)"
    )]
    UnknownKey(String),
    /// One field of the request is wrong; `field` is its name on the wire (`settings.baseUrl`).
    #[error("`{field}`: {message}")]
    Field {
        field: &'static str,
        message: String,
        /// The field names something that does not exist (an unknown provider id).
        not_found: bool,
    },
    #[error("could not write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ConfigWriteError {
    /// The reference's `config_write_error_code`, which clients branch on; `None` for a failure
    /// of the disk rather than of the request.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            ConfigWriteError::VersionConflict => Some("configVersionConflict"),
            ConfigWriteError::Readonly => Some("configLayerReadonly"),
            ConfigWriteError::Validation(_) => Some("configValidationError"),
            ConfigWriteError::UnknownKey(_) => Some("configSchemaUnknownKey"),
            ConfigWriteError::Field {
                not_found: true, ..
            } => Some("configPathNotFound"),
            ConfigWriteError::Field { .. } => Some("configValidationError"),
            ConfigWriteError::Io { .. } => None,
        }
    }
}
