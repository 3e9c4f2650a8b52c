//! `fs/*`: the host file operations a GUI client asks for (read, write, metadata, list, create,
//! remove, copy, watch), with the reference's wire names. File contents travel as base64.
//! Plain data only: where these may reach is the server's business.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `fs/readFile`: read a file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadFileParams {
    /// Absolute path of the file.
    pub path: String,
}

/// The file's bytes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadFileResponse {
    /// File contents encoded as base64.
    pub data_base64: String,
}

/// `fs/writeFile`: replace (or create) a file with new contents.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsWriteFileParams {
    /// Absolute path of the file.
    pub path: String,
    /// File contents encoded as base64.
    pub data_base64: String,
}

/// `fs/getMetadata`: what a path is.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsGetMetadataParams {
    /// Absolute path to inspect.
    pub path: String,
}

/// A path's kind and times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsGetMetadataResponse {
    /// Whether the path is a directory (a link is not followed, so it is never one).
    pub is_directory: bool,
    /// Whether the path is a regular file (a link is not followed, so it is never one).
    pub is_file: bool,
    /// Whether the path itself is a symbolic link.
    pub is_symlink: bool,
    /// Creation time in Unix milliseconds when the file system records it, otherwise `0`.
    pub created_at_ms: i64,
    /// Modification time in Unix milliseconds, otherwise `0`.
    pub modified_at_ms: i64,
}

/// `fs/readDirectory`: a directory's direct children.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadDirectoryParams {
    /// Absolute path of the directory.
    pub path: String,
}

/// One child of a directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadDirectoryEntry {
    /// The child's name only, not a path.
    pub file_name: String,
    /// Whether the child is a directory (links are not followed).
    pub is_directory: bool,
    /// Whether the child is a regular file (links are not followed).
    pub is_file: bool,
}

/// The children of a directory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadDirectoryResponse {
    pub entries: Vec<FsReadDirectoryEntry>,
}

/// `fs/createDirectory`: make a directory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsCreateDirectoryParams {
    /// Absolute path of the directory to create.
    pub path: String,
    /// Whether missing parents are created too (and an existing directory is fine). Defaults
    /// to `true`.
    #[serde(default)]
    pub recursive: Option<bool>,
}

/// `fs/remove`: remove a file or a directory tree.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsRemoveParams {
    /// Absolute path to remove.
    pub path: String,
    /// Whether a directory's contents are removed with it. Defaults to `true`.
    #[serde(default)]
    pub recursive: Option<bool>,
    /// Whether a missing path is fine. Defaults to `true`.
    #[serde(default)]
    pub force: Option<bool>,
}

/// `fs/copy`: copy a file or a directory tree.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsCopyParams {
    /// Absolute source path.
    pub source_path: String,
    /// Absolute destination path.
    pub destination_path: String,
    /// Required (`true`) to copy a directory; ignored for a file.
    #[serde(default)]
    pub recursive: bool,
}

/// `fs/watch`: report changes to a path as `fs/changed` until `fs/unwatch`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsWatchParams {
    /// Absolute file or directory path to watch.
    pub path: String,
    /// The client's name for this watch, unique on its connection.
    pub watch_id: String,
}

/// The watch is running.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsWatchResponse {
    /// The watched path, canonical when it exists.
    pub path: String,
}

/// `fs/unwatch`: stop a watch (an unknown id is fine).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsUnwatchParams {
    pub watch_id: String,
}

/// `fs/changed`: paths under a watch changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsChangedNotification {
    pub watch_id: String,
    /// The paths that changed, absolute, each once.
    pub changed_paths: Vec<String>,
}
