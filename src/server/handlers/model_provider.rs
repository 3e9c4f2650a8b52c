//! `modelProvider/list` and `modelProvider/capabilities/read`: the configured providers and what
//! openturn can ask of the default one, read from the daemon's configuration.

use crate::config::ProviderInfo;
use crate::config::DEMO_PROVIDER_ID;
use crate::core::tools::web_search::TOOL_NAME as WEB_SEARCH_TOOL;
use crate::protocol::model_provider::{
    GatewayAuth, ModelProviderCapabilitiesReadResponse, ModelProviderListResponse,
    ModelProviderNoParams, ModelProviderSummary, ProviderSettings,
};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The provider ids the daemon defines without a table of the user's.
const BUILT_IN_PROVIDERS: &[&str] = &["openai", DEMO_PROVIDER_ID];

pub(crate) fn model_provider_list(
    context: &ServerContext,
    _params: ModelProviderNoParams,
) -> Result<ModelProviderListResponse, HandlerError> {
    // The file as it is now: a client lists again after `modelProvider/config/write`.
    let config = &context.config.reloaded()?;
    let user_tables = config
        .table
        .get("model_providers")
        .and_then(|v| v.as_table());
    let data = config
        .model_providers
        .values()
        .map(|provider| {
            let has_table = user_tables.is_some_and(|tables| tables.contains_key(&provider.id));
            summary(provider, has_table)
        })
        .collect();
    Ok(ModelProviderListResponse {
        data,
        default_provider_id: config.model_provider_id.clone(),
        can_change_default: true,
    })
}

/// One provider as listed. The built-in `openai` (unless a table of the user's redefines it)
/// reads as the reference's `openai` kind; everything else is a gateway.
pub(super) fn summary(provider: &ProviderInfo, has_table: bool) -> ModelProviderSummary {
    let built_in = BUILT_IN_PROVIDERS.contains(&provider.id.as_str()) && !has_table;
    let settings = if built_in && provider.id == "openai" {
        ProviderSettings::Openai
    } else {
        ProviderSettings::CustomGateway {
            auth: match &provider.env_key {
                Some(env_key) if !env_key.is_empty() => GatewayAuth::EnvironmentVariable {
                    env_key: env_key.clone(),
                },
                _ => GatewayAuth::None,
            },
        }
    };
    ModelProviderSummary {
        id: provider.id.clone(),
        name: provider.name.clone(),
        can_edit: !built_in,
        base_url: (!built_in || provider.id == DEMO_PROVIDER_ID)
            .then(|| displayable_url(&provider.base_url))
            .flatten(),
        settings,
    }
}

/// The address when showing it cannot leak a secret: one with user info (`user:pass@`) or a
/// query (`?api-key=…`) is withheld.
fn displayable_url(url: &str) -> Option<String> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme.split('/').next().unwrap_or_default();
    (!authority.contains('@') && !url.contains('?') && !url.is_empty()).then(|| url.to_string())
}

/// What a thread of the configured model is offered: the hosted web search when that model's
/// tool set holds it (`core/tool_set.rs` decides, with `[tools]`, `[models.<id>]` and
/// `web_search = "disabled"` applied), never an image generation tool, which openturn does not
/// have. (The reference answers `true` for both whatever the configuration: it describes the
/// provider; this answer describes what a new thread gets.)
pub(crate) fn model_provider_capabilities_read(
    context: &ServerContext,
    _params: ModelProviderNoParams,
) -> Result<ModelProviderCapabilitiesReadResponse, HandlerError> {
    let config = &context.config;
    let web_search = config
        .model_catalog
        .tool_names(&config.model)
        .iter()
        .any(|name| name == WEB_SEARCH_TOOL);
    Ok(ModelProviderCapabilitiesReadResponse {
        image_generation: false,
        web_search,
    })
}

handler!(ModelProviderList, |context, params| model_provider_list(
    context, params
));
handler!(ModelProviderCapabilitiesRead, |context, params| {
    model_provider_capabilities_read(context, params)
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_could_carry_a_secret_are_withheld() {
        assert_eq!(
            displayable_url("http://127.0.0.1:5/v1").as_deref(),
            Some("http://127.0.0.1:5/v1")
        );
        assert_eq!(displayable_url("https://user:key@host/v1"), None);
        assert_eq!(displayable_url("https://host/v1?api-key=k"), None);
        assert_eq!(
            displayable_url("https://host/v1/a@b").as_deref(),
            Some("https://host/v1/a@b")
        );
    }
}
