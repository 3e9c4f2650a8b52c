//! `collaborationMode/list` (experimental API): core's collaboration presets
//! (`core/collaboration`) as the wire shows them.

use crate::core::collaboration::{CollaborationModeKind, CollaborationPreset, PRESETS};
use crate::protocol::collaboration_mode::{
    CollaborationModeListParams, CollaborationModeListResponse, CollaborationModeMask,
};
use crate::protocol::thread_settings::ModeKind;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::thread_settings::require_experimental;

fn collaboration_mode_list(
    context: &ServerContext,
    _params: CollaborationModeListParams,
) -> Result<CollaborationModeListResponse, HandlerError> {
    require_experimental(context, "collaborationMode/list")?;
    Ok(CollaborationModeListResponse {
        data: PRESETS.iter().map(mask).collect(),
    })
}

fn mask(preset: &CollaborationPreset) -> CollaborationModeMask {
    CollaborationModeMask {
        name: preset.name.to_string(),
        mode: Some(match preset.kind {
            CollaborationModeKind::Plan => ModeKind::Plan,
            CollaborationModeKind::Default => ModeKind::Default,
        }),
        model: preset.model.map(str::to_string),
        reasoning_effort: preset.reasoning_effort.map(str::to_string),
    }
}

handler!(CollaborationModeList, |context, params| {
    collaboration_mode_list(context, params)
});
