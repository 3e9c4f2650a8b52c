//! The one place the user's config.toml is edited (`config/value/write`, `config/batchWrite`,
//! `skills/config/write`). A write:
//!
//! - refuses when the file changed since the client read it (`expectedVersion`, the
//!   `sha256:` of the file's text that `config/read` reports);
//! - edits the document with `toml_edit` ([`super::write_edit`]), so keys and comments it does
//!   not touch survive byte for byte;
//! - refuses a key neither openturn nor the reference knows, naming it, and any result that
//!   would not load as a config.toml, before anything is written;
//! - replaces the file atomically: a temporary file beside it, written and fsynced, renamed over
//!   it, then the folder fsynced. A crash leaves the old file or the new one, never half of
//!   either. A symlinked config.toml is written through to its target.
//!
//! Writes are serialized process-wide, so two connections cannot interleave read-edit-rename.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value as Json;
use toml_edit::DocumentMut;

use super::check::{self, ConfigSource};
use super::write_edit::{apply, key_segments};
pub use super::write_error::{ConfigWriteError, MergeStrategy};
use super::Config;

/// One change: a dotted key path, the JSON value to put there (`null` removes the key).
#[derive(Debug, Clone)]
pub struct ConfigEdit {
    pub key_path: String,
    pub value: Json,
    pub merge: MergeStrategy,
}

/// What a successful write left on disk.
#[derive(Debug, Clone)]
pub struct WriteOutcome {
    /// The version of the text now in the file.
    pub version: String,
    /// The file written (a symlink's target).
    pub path: PathBuf,
}

/// One write at a time in this process: read, edit and rename are one step.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// The version `config/read` reports for a layer and `expectedVersion` is compared with.
pub fn version_of(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = digest
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The user's config.toml: `home/config.toml`, or the file it links to.
pub fn user_config_path(home: &Path) -> PathBuf {
    let path = home.join("config.toml");
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// Whether `file_path` (a write's `filePath`) names the user's config.toml. Other layers
/// (project files, flags) are not written.
pub fn is_user_config(home: &Path, file_path: &Path) -> bool {
    let user = user_config_path(home);
    let asked = std::fs::canonicalize(file_path).unwrap_or_else(|_| file_path.to_path_buf());
    asked == user || file_path == home.join("config.toml")
}

/// Applies `edits` in order to the user's config.toml (`config`'s home) and replaces it, or
/// changes nothing. The result must load under `config`'s flags. Blocking file I/O: call it off
/// the async threads.
pub fn write_user_config(
    config: &Config,
    edits: &[ConfigEdit],
    expected_version: Option<&str>,
) -> Result<WriteOutcome, ConfigWriteError> {
    let _one_writer = match WRITE_LOCK.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    let path = user_config_path(&config.home);
    let io_error = |source| ConfigWriteError::Io {
        path: path.clone(),
        source,
    };
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(io_error(source)),
    };
    let current_text = current.clone().unwrap_or_default();
    if expected_version.is_some_and(|expected| expected != version_of(&current_text)) {
        return Err(ConfigWriteError::VersionConflict);
    }
    let mut document: DocumentMut = current_text.parse().map_err(|error| {
        ConfigWriteError::Validation(format!("{} is not valid TOML: {error}", path.display()))
    })?;
    // Comments after the last key belong to the end of the file, not to whatever an edit
    // appends: they are set aside and put back where the old text had them.
    let trailing = document.trailing().as_str().unwrap_or_default().to_string();
    document.set_trailing("");
    let before = document.to_string();
    for edit in edits {
        let segments = key_segments(&edit.key_path)?;
        refuse_unknown(&edit.key_path, &edit.value)?;
        apply(&mut document, &segments, &edit.value, edit.merge)?;
    }
    let text = with_trailing(&before, &document.to_string(), &trailing);
    config
        .check_user_text(&text)
        .map_err(|error| ConfigWriteError::Validation(format!("Invalid configuration: {error}")))?;
    if current.as_deref() != Some(text.as_str()) {
        replace_atomically(&path, &text).map_err(io_error)?;
    }
    Ok(WriteOutcome {
        version: version_of(&text),
        path,
    })
}

/// `after` with the file's `trailing` comments back in place: where the text before the edits
/// ended when the edits only appended (a blank line keeps a comment off a new table), at the
/// very end otherwise.
fn with_trailing(before: &str, after: &str, trailing: &str) -> String {
    if trailing.is_empty() {
        return after.to_string();
    }
    match after.strip_prefix(before) {
        Some(appended) if !appended.is_empty() => {
            let gap = if trailing.ends_with("\n\n") || appended.starts_with('\n') {
                ""
            } else {
                "\n"
            };
            format!("{before}{trailing}{gap}{appended}")
        }
        _ => format!("{after}{trailing}"),
    }
}

/// Refuses a value that sets a key nobody reads (removing one is fine: that is how a typo is
/// cleaned up), or a value of the wrong kind, naming the key.
fn refuse_unknown(key_path: &str, value: &Json) -> Result<(), ConfigWriteError> {
    let Some(value) = super::json_to_toml(value) else {
        return Ok(());
    };
    let mut alone = toml::Table::new();
    super::set_dotted(&mut alone, key_path, value)
        .map_err(|error| ConfigWriteError::Validation(error.to_string()))?;
    let source = ConfigSource::Flag(format!("{key_path}=…"));
    let unknown = check::unknown_keys(&alone, &source)
        .map_err(|error| ConfigWriteError::Validation(format!("Invalid configuration: {error}")))?;
    match unknown.into_iter().next() {
        Some(key) => Err(ConfigWriteError::UnknownKey(key)),
        None => Ok(()),
    }
}

/// Writes `text` to a new file beside `path` and renames it over `path`. The new file keeps
/// the old one's permissions (0600 for a new file: config may hold header values).
fn replace_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)?;
    let mode = std::fs::metadata(path)
        .map(|metadata| metadata.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config.toml".to_string());
    let temporary = folder.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&temporary)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error);
    }
    // The rename is durable once the folder's entry is.
    std::fs::File::open(folder)?.sync_all()
}

/// The first edit a `-c` flag overrides: its key path and the flag's value there. A flag on
/// the key, on a table above it, or on a key inside it wins over the file.
pub fn overridden_by_flags(
    session_flags: &toml::Table,
    edits: &[ConfigEdit],
) -> Option<(String, toml::Value)> {
    edits.iter().find_map(|edit| {
        let mut table = session_flags;
        let segments: Vec<&str> = edit.key_path.split('.').collect();
        for (index, segment) in segments.iter().enumerate() {
            let value = table.get(*segment)?;
            match value {
                toml::Value::Table(inner) if index + 1 < segments.len() => table = inner,
                _ => return Some((edit.key_path.clone(), value.clone())),
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit(key: &str, value: Json) -> ConfigEdit {
        ConfigEdit {
            key_path: key.to_string(),
            value,
            merge: MergeStrategy::Replace,
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_and_leave_the_file() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("config.toml");
        std::fs::write(&file, "# mine\nmodel = \"a\"\n").unwrap();
        let unknown = write_user_config(
            &Config::load(home.path(), &[]).unwrap(),
            &[edit("modle", json!("b"))],
            None,
        );
        assert!(
            matches!(&unknown, Err(ConfigWriteError::UnknownKey(key)) if key == "modle"),
            "{unknown:?}"
        );
        let wrong = write_user_config(
            &Config::load(home.path(), &[]).unwrap(),
            &[edit("model", json!(5))],
            None,
        );
        assert!(matches!(wrong, Err(ConfigWriteError::Validation(_))));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "# mine\nmodel = \"a\"\n"
        );
    }

    #[test]
    fn a_stale_version_conflicts_and_the_current_one_writes() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("config.toml");
        std::fs::write(&file, "model = \"a\"\n").unwrap();
        let stale = write_user_config(
            &Config::load(home.path(), &[]).unwrap(),
            &[edit("model", json!("b"))],
            Some("x"),
        );
        assert!(matches!(stale, Err(ConfigWriteError::VersionConflict)));
        let current = version_of("model = \"a\"\n");
        let written = write_user_config(
            &Config::load(home.path(), &[]).unwrap(),
            &[edit("model", json!("b"))],
            Some(&current),
        )
        .unwrap();
        assert_eq!(written.version, version_of("model = \"b\"\n"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "model = \"b\"\n");
    }

    #[test]
    fn flags_on_the_key_or_above_it_override() {
        let flags: toml::Table = "model = \"x\"\n[features]\ngoals = true\n".parse().unwrap();
        let found = overridden_by_flags(&flags, &[edit("features.goals", json!(false))]);
        assert_eq!(
            found,
            Some(("features.goals".to_string(), toml::Value::Boolean(true)))
        );
        assert_eq!(
            overridden_by_flags(&flags, &[edit("features.fast_mode", json!(false))]),
            None
        );
    }
}
