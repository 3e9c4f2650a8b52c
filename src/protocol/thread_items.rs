//! `thread/items/list`: a thread's items in pages, oldest first or newest first, so a client can
//! replay a long history without one huge `thread/read`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::item::ThreadItem;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListParams {
    pub thread_id: String,
    /// Only the items of this turn; all turns when absent.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// A cursor from an earlier page (or `itemsBackwardsCursor` of `thread/resume`), or an
    /// item anchor (requires `turnId`; the page starts just past that item).
    #[serde(default)]
    pub cursor: Option<ThreadItemsListCursor>,
    /// Page size; the whole rest of the list when absent.
    #[serde(default)]
    pub limit: Option<u32>,
    /// `asc` (default: oldest first) or `desc`.
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// Accepted for compatibility: outputs are always returned inline.
    #[serde(default)]
    pub defer_output: Option<serde_json::Value>,
}

/// A page position: an opaque cursor this server issued, or an item anchor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ThreadItemsListCursor {
    Cursor(String),
    Anchor(ThreadItemsListAnchor),
}

/// `{"type": "item", "itemId": "…"}`: the position just past (or, descending, just before) an
/// item of the requested turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItemsListAnchor {
    #[serde(rename_all = "camelCase")]
    Item { item_id: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SortDirection {
    Asc,
    Desc,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListResponse {
    pub data: Vec<ThreadItemEntry>,
    /// Continues in the same direction; `null` at the end.
    pub next_cursor: Option<String>,
    /// Continues in the opposite direction from this page's first item; `null` for an empty
    /// page or when nothing lies that way.
    pub backwards_cursor: Option<String>,
}

/// One item with the turn it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemEntry {
    pub turn_id: String,
    pub item: ThreadItem,
    pub started_at_ms: Option<i64>,
    pub completed_at_ms: Option<i64>,
}
