//! `thread/search`: text search over stored threads, in pages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::thread::{SortDirection, Thread};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSearchParams {
    /// The text to find (case-insensitive substring); surrounding whitespace is ignored.
    pub search_term: String,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// `true`: only archived threads; otherwise only live ones.
    #[serde(default)]
    pub archived: Option<bool>,
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    #[serde(default)]
    pub sort_key: Option<ThreadSearchSortKey>,
    /// Empty or absent: interactive sources.
    #[serde(default)]
    pub source_kinds: Option<Vec<String>>,
    /// Accepted for compatibility: openturn has no attached threads or accounts to filter by.
    #[serde(default)]
    pub include_attached_threads: bool,
    #[serde(default)]
    pub current_account_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadSearchSortKey {
    CreatedAt,
    UpdatedAt,
    RecencyAt,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSearchResponse {
    pub data: Vec<ThreadSearchResult>,
    /// Continues after the last thread looked at; `null` once every thread was searched. A
    /// page cut short by the search's bounds still carries one, possibly with fewer results.
    pub next_cursor: Option<String>,
    /// Pass with the opposite `sortDirection` to page back from this page's first result.
    pub backwards_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSearchResult {
    pub thread: Thread,
    /// Text around the first match.
    pub snippet: String,
}
