//! What a tool call answers the model. Its own file because every tool and the turn loop share
//! it: the tools import it from here, not through `tools/mod.rs`, which imports every tool.

use crate::wire::ResponseItem;

use super::super::ids::ItemId;

/// What goes back to the model for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolOutput {
    pub call_id: ItemId,
    /// Answer a `custom_tool_call` with `custom_tool_call_output`.
    pub custom: bool,
    pub text: String,
}

impl ToolOutput {
    pub(crate) fn into_item(self) -> ResponseItem {
        if self.custom {
            ResponseItem::CustomToolCallOutput {
                call_id: self.call_id.into_string(),
                output: self.text,
            }
        } else {
            ResponseItem::FunctionCallOutput {
                call_id: self.call_id.into_string(),
                output: self.text.into(),
            }
        }
    }
}
