//! `modelProvider/default/set` and `modelProvider/config/write`: the provider new threads use,
//! and a gateway's settings, written to the user's config.toml. The rules and the edits are
//! the config layer's ([`crate::config::provider_edit`]); the write is the one writer's
//! ([`super::config_write::write`]); this file converts and reports.

use crate::config::provider_edit::{default_provider_edit, gateway_edit, GatewayPatch};
use crate::config::write::ConfigWriteError;
use crate::protocol::config_write::ConfigWriteResponse;
use crate::protocol::model_provider::{
    ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse,
    ModelProviderDefaultSetParams, ProviderSettingsPatch,
};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::config_write::write;
use super::model_provider::summary;

/// Sets `model_provider`, once the file as it is now defines the provider. New threads read
/// the file, so they start on it.
async fn model_provider_default_set(
    context: &ServerContext,
    params: ModelProviderDefaultSetParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let fresh = context.config.reloaded()?;
    let edit = default_provider_edit(&fresh, &params.provider_id)?;
    write(context, vec![edit], None, None).await
}

/// Edits or creates a gateway and answers with it as `modelProvider/list` now shows it.
async fn model_provider_config_write(
    context: &ServerContext,
    params: ModelProviderConfigWriteParams,
) -> Result<ModelProviderConfigWriteResponse, HandlerError> {
    let patch = match params.settings {
        ProviderSettingsPatch::CustomGateway {
            provider_id,
            name,
            base_url,
            env_key,
        } => GatewayPatch {
            provider_id,
            name,
            base_url,
            env_key,
        },
        ProviderSettingsPatch::Bedrock { .. } | ProviderSettingsPatch::Gcp { .. } => {
            return Err(ConfigWriteError::Field {
                field: "settings.type",
                message: "openturn speaks only the Responses API: it has no Amazon Bedrock or \
                          Google Cloud provider to configure (use `customGateway`)."
                    .to_string(),
                not_found: false,
            }
            .into())
        }
    };
    let fresh = context.config.reloaded()?;
    let (id, edit) = gateway_edit(&fresh, patch)?;
    write(context, vec![edit], None, None).await?;
    let written = context.config.reloaded()?;
    let provider = written.model_providers.get(&id).ok_or_else(|| {
        HandlerError::Internal(format!("provider `{id}` vanished after its write"))
    })?;
    Ok(ModelProviderConfigWriteResponse {
        provider: summary(provider, true),
    })
}

handler!(ModelProviderDefaultSet, |context, params| {
    model_provider_default_set(context, params).await
});
handler!(ModelProviderConfigWrite, |context, params| {
    model_provider_config_write(context, params).await
});
