//! Reading rollouts back, tolerant of crashes: a torn last line is skipped with a warning, unknown
//! line types are skipped, and a corrupt line in the middle is an error naming the file and line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::RolloutError;
use super::line::{RolloutItem, RolloutLine, SessionMeta};

/// Everything a rollout file holds, in file order.
#[derive(Debug, Clone)]
pub struct RolloutContents {
    pub path: PathBuf,
    pub meta: SessionMeta,
    pub items: Vec<RolloutItem>,
    /// When each of `items` was written (its line's timestamp, in Unix ms), index for index;
    /// `None` where the timestamp does not parse.
    pub item_times_ms: Vec<Option<i64>>,
    /// Human-readable notes about skipped lines (torn tail, unknown types).
    pub warnings: Vec<String>,
}

/// Reads and parses the rollout at `path`; a symbolic link is refused, not followed.
pub fn read_rollout(path: &Path) -> Result<RolloutContents, RolloutError> {
    use std::io::Read;
    let mut file = super::error::no_follow(std::fs::OpenOptions::new().read(true))
        .open(path)
        .map_err(|source| RolloutError::opening(path, source))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|source| RolloutError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    parse_rollout(path, &bytes)
}

/// Parses the bytes of a rollout file; `path` only names it in errors.
pub fn parse_rollout(path: &Path, bytes: &[u8]) -> Result<RolloutContents, RolloutError> {
    let corrupt = |line: usize, message: String| RolloutError::Corrupt {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut meta = None;
    let mut items = Vec::new();
    let mut item_times_ms = Vec::new();
    let mut warnings = Vec::new();
    // A file that does not end in '\n' was cut mid-write: its last segment is torn.
    let ends_cleanly = bytes.ends_with(b"\n");
    let segments: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let last_index = segments.len().saturating_sub(1);
    for (index, segment) in segments.iter().enumerate() {
        let line_number = index + 1;
        if segment.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let is_torn_tail = index == last_index && !ends_cleanly;
        // The typed parse is the common case; the untyped one only explains a failure.
        let line: RolloutLine = match serde_json::from_slice(segment) {
            Ok(line) => line,
            Err(typed_error) => match serde_json::from_slice::<Value>(segment) {
                Err(error) if is_torn_tail => {
                    warnings.push(format!(
                        "{}: skipped a torn last line {line_number} ({error})",
                        path.display()
                    ));
                    continue;
                }
                Err(error) => return Err(corrupt(line_number, error.to_string())),
                Ok(value) if is_known_type(&value) => {
                    return Err(corrupt(line_number, typed_error.to_string()))
                }
                Ok(_) => {
                    warnings.push(format!(
                        "{}: skipped line {line_number} of unknown type",
                        path.display()
                    ));
                    continue;
                }
            },
        };
        match line.item {
            RolloutItem::SessionMeta(found) if meta.is_none() => meta = Some(found),
            other => {
                items.push(other);
                item_times_ms.push(
                    chrono::DateTime::parse_from_rfc3339(&line.timestamp)
                        .ok()
                        .map(|at| at.timestamp_millis()),
                );
            }
        }
    }
    let meta = meta.ok_or_else(|| corrupt(1, "no session_meta line".to_string()))?;
    Ok(RolloutContents {
        path: path.to_path_buf(),
        meta,
        items,
        item_times_ms,
        warnings,
    })
}

fn is_known_type(value: &Value) -> bool {
    matches!(
        value.get("type").and_then(Value::as_str),
        Some(
            "session_meta"
                | "response_item"
                | "turn_started"
                | "turn_item"
                | "turn_ended"
                | "thread_name"
                | "settings_changed"
                | "token_usage"
        )
    )
}
