//! `fuzzyFileSearch` and its typing-as-you-go session (`fuzzyFileSearch/session*`, experimental):
//! file and directory names ranked against a query. Field names of a result are snake_case on
//! the wire, as the reference sends them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `fuzzyFileSearch`: one search over `roots`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchParams {
    pub query: String,
    /// Absolute directories to search.
    pub roots: Vec<String>,
    /// A later search carrying the same token cancels this one, which then answers no files.
    #[serde(default)]
    pub cancellation_token: Option<String>,
}

/// Whether a match is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FuzzyFileSearchMatchType {
    File,
    Directory,
}

/// One ranked match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FuzzyFileSearchResult {
    /// The root (as given) the match was found under.
    pub root: String,
    /// The match's path relative to `root`.
    pub path: String,
    pub match_type: FuzzyFileSearchMatchType,
    /// The last component of `path`.
    pub file_name: String,
    /// Higher is better.
    pub score: u32,
    /// Character positions in `path` the query matched, ascending.
    pub indices: Option<Vec<u32>>,
}

/// The best matches, best first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FuzzyFileSearchResponse {
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionStart`: open a session over `roots`; queries come with updates.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStartParams {
    pub session_id: String,
    pub roots: Vec<String>,
}

/// `fuzzyFileSearch/sessionUpdate`: search the session's roots for a new query.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdateParams {
    pub session_id: String,
    pub query: String,
}

/// `fuzzyFileSearch/sessionStop`: end a session (an unknown id is fine).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStopParams {
    pub session_id: String,
}

/// `fuzzyFileSearch/sessionUpdated`: the matches for the session's latest query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdatedNotification {
    pub session_id: String,
    pub query: String,
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionCompleted`: the search for the latest query has finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionCompletedNotification {
    pub session_id: String,
}
