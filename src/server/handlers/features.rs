//! `experimentalFeature/list` and `experimentalFeature/enablement/set`: the feature flags
//! openturn acts on (`config::features`), their state in the configuration as it is now, and
//! their process-wide runtime enablement (threads started afterwards use it).

use crate::config::features::{set_runtime, FeatureStage, FEATURES};
use crate::protocol::config_write::{
    ExperimentalFeature, ExperimentalFeatureEnablement, ExperimentalFeatureListParams,
    ExperimentalFeatureListResponse,
};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// Flags per page when the client names no limit.
const DEFAULT_PAGE: usize = 100;

fn experimental_feature_list(
    context: &ServerContext,
    params: ExperimentalFeatureListParams,
) -> Result<ExperimentalFeatureListResponse, HandlerError> {
    let start = match &params.cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|start| *start <= FEATURES.len())
            .ok_or_else(|| HandlerError::InvalidRequest(format!("invalid cursor: {cursor}")))?,
        None => 0,
    };
    let limit = params
        .limit
        .map_or(DEFAULT_PAGE, |limit| (limit as usize).max(1));
    let config = context.config.reloaded()?;
    let end = (start + limit).min(FEATURES.len());
    let data = FEATURES[start..end]
        .iter()
        .map(|spec| {
            let beta = spec.stage == FeatureStage::Beta;
            ExperimentalFeature {
                name: spec.name.to_string(),
                stage: spec.stage.as_str().to_string(),
                display_name: beta.then(|| spec.display_name.to_string()),
                description: beta.then(|| spec.description.to_string()),
                announcement: beta.then(String::new),
                enabled: config.feature_enabled(spec.name),
                default_enabled: spec.default_enabled,
            }
        })
        .collect();
    Ok(ExperimentalFeatureListResponse {
        data,
        next_cursor: (end < FEATURES.len()).then(|| end.to_string()),
    })
}

fn experimental_feature_enablement_set(
    _context: &ServerContext,
    params: ExperimentalFeatureEnablement,
) -> Result<ExperimentalFeatureEnablement, HandlerError> {
    Ok(ExperimentalFeatureEnablement {
        enablement: set_runtime(&params.enablement),
    })
}

handler!(ExperimentalFeatureList, |context, params| {
    experimental_feature_list(context, params)
});
handler!(ExperimentalFeatureEnablementSet, |context, params| {
    experimental_feature_enablement_set(context, params)
});
