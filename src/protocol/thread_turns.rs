//! `thread/turns/list`: a thread's turns in pages, newest first by default, so a client can show
//! the latest turns of a long thread without reading all of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::thread::SortDirection;
use super::turn::Turn;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListParams {
    pub thread_id: String,
    /// A `nextCursor` or `backwardsCursor` from an earlier page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size; the whole rest of the list when absent.
    #[serde(default)]
    pub limit: Option<u32>,
    /// `desc` (default: newest first) or `asc`.
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// How much of each turn's items to carry; `summary` when absent.
    #[serde(default)]
    pub items_view: Option<TurnItemsView>,
}

/// `notLoaded` (no items), `summary` (the user's and the agent's messages) or `full` (every
/// stored item).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnItemsView {
    NotLoaded,
    Summary,
    Full,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListResponse {
    /// The page, in the requested direction.
    pub data: Vec<Turn>,
    /// Continues in the same direction after the last turn; `null` at the end.
    pub next_cursor: Option<String>,
    /// With the opposite direction, pages back from (and including) this page's first turn;
    /// `null` for an empty page.
    pub backwards_cursor: Option<String>,
}
