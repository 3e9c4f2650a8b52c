//! The API key a client stored with `account/login/start {"type": "apiKey"}`: one small JSON file,
//! `$OPENTURN_HOME/auth.json` (`{"auth_mode": "apikey", "OPENAI_API_KEY": "…"}`, the layout the
//! reference uses for the same purpose), mode 0600, replaced atomically (write a temporary file
//! beside it, fsync, rename) so a crash never leaves half a key. The key is never logged: it
//! lives in [`ApiKey`], which prints as `<redacted>`, and errors here name the file, not its
//! contents.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::api_key::ApiKey;

/// The file's name inside the home folder.
pub const STORED_KEY_FILE: &str = "auth.json";

/// Why the stored key could not be read, written or removed.
#[derive(Debug, thiserror::Error)]
pub enum StoredKeyError {
    #[error("cannot {action} the stored API key at {path}: {message}")]
    Io {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error("the stored API key file {path} is not valid JSON of the expected shape: {message}")]
    Malformed { path: PathBuf, message: String },
}

#[derive(Serialize, Deserialize)]
struct StoredKeyFile {
    auth_mode: String,
    #[serde(rename = "OPENAI_API_KEY")]
    openai_api_key: Option<String>,
}

/// `home/auth.json`.
pub fn stored_key_path(home: &Path) -> PathBuf {
    home.join(STORED_KEY_FILE)
}

/// The stored key, `Ok(None)` when there is none (no file, or a file without a key).
pub fn read_stored_key(file: &Path) -> Result<Option<ApiKey>, StoredKeyError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error("read", file, &error)),
    };
    let parsed: StoredKeyFile =
        serde_json::from_str(&text).map_err(|error| StoredKeyError::Malformed {
            path: file.to_path_buf(),
            // serde's message for a type mismatch can quote the value: keep only its position.
            message: format!("line {} column {}", error.line(), error.column()),
        })?;
    Ok(parsed
        .openai_api_key
        .map(|key| key.trim().to_string())
        .filter(|key| !key.is_empty())
        .map(ApiKey::new))
}

/// Stores `key`, replacing any earlier one. The temporary file is created 0600 before the key
/// is written into it, so the key is never readable by others, even for a moment.
pub fn write_stored_key(file: &Path, key: &ApiKey) -> Result<(), StoredKeyError> {
    let folder = file.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|error| io_error("create the folder of", file, &error))?;
    let body = StoredKeyFile {
        auth_mode: "apikey".to_string(),
        openai_api_key: Some(key.expose().to_string()),
    };
    let text = serde_json::to_string_pretty(&body)
        .map_err(|error| io_error("encode", file, &std::io::Error::other(error)))?;
    let temporary = folder.join(format!(".{STORED_KEY_FILE}.{}.tmp", std::process::id()));
    let written =
        write_private(&temporary, text.as_bytes()).and_then(|()| std::fs::rename(&temporary, file));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(io_error("write", file, &error));
    }
    // The rename is durable only once the folder's entry is.
    if let Ok(dir) = std::fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Removes the stored key; `Ok(false)` when there was none.
pub fn remove_stored_key(file: &Path) -> Result<bool, StoredKeyError> {
    match std::fs::remove_file(file) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io_error("remove", file, &error)),
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    // A file left by an earlier crash keeps its old mode on open: set it again.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

fn io_error(action: &'static str, path: &Path, error: &std::io::Error) -> StoredKeyError {
    StoredKeyError::Io {
        action,
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_key_round_trips_with_mode_0600_and_logout_removes_it() {
        let home = tempfile::tempdir().unwrap();
        let file = stored_key_path(home.path());
        assert!(read_stored_key(&file).unwrap().is_none());
        write_stored_key(&file, &ApiKey::new("sk-one".to_string())).unwrap();
        write_stored_key(&file, &ApiKey::new("sk-two".to_string())).unwrap();
        let key = read_stored_key(&file).unwrap();
        assert_eq!(key.as_ref().map(ApiKey::expose), Some("sk-two"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(home.path())
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(STORED_KEY_FILE)]);
        assert!(remove_stored_key(&file).unwrap());
        assert!(!remove_stored_key(&file).unwrap());
        assert!(read_stored_key(&file).unwrap().is_none());
    }

    #[test]
    fn a_malformed_file_is_an_error_that_does_not_quote_its_contents() {
        let home = tempfile::tempdir().unwrap();
        let file = stored_key_path(home.path());
        std::fs::write(
            &file,
            r#"{"auth_mode": "apikey", "OPENAI_API_KEY": 12345678}"#,
        )
        .unwrap();
        let error = read_stored_key(&file)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("auth.json"), "{error}");
        assert!(!error.contains("12345678"), "{error}");
    }
}
