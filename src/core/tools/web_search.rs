//! `web_search`: the provider's hosted search. openturn runs nothing for it; the entry in the
//! request lets the model search, and the `web_search_call` items it returns are shown to the
//! client as `webSearch` items and replayed with the history (`turn/response`).

use serde_json::{json, Value};

use super::super::settings::{SandboxMode, ThreadSettings};
use super::super::tool_set::{ToolFamily, WebSearchMode};

pub(crate) const TOOL_NAME: &str = "web_search";

/// The hosted tool's entry: live pages only when the configuration says `live` or `indexed`
/// or the thread runs without a sandbox (its commands could fetch them anyway), the provider's
/// index on top for `indexed`; the image-capable families also get image results.
pub(crate) fn spec(settings: &ThreadSettings) -> Value {
    let mode = settings
        .model_catalog
        .tool_config()
        .web_search_mode(settings.sandbox == SandboxMode::DangerFullAccess);
    let mut spec = json!({
        "type": "web_search",
        "external_web_access": matches!(mode, WebSearchMode::Live | WebSearchMode::Indexed),
    });
    if mode == WebSearchMode::Indexed {
        spec["indexed_web_access"] = json!(true);
    }
    if settings.model_catalog.tool_family(&settings.model) == ToolFamily::Gpt55 {
        spec["search_content_types"] = json!(["text", "image"]);
    }
    spec
}
