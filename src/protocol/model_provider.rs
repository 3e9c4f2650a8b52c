//! `modelProvider/*`: the configured model providers as a client's settings screen shows them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `modelProvider/list` and `modelProvider/capabilities/read` take no params.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ModelProviderNoParams {}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderListResponse {
    /// Every configured provider, by id.
    pub data: Vec<ModelProviderSummary>,
    /// The provider new threads use (`model_provider`).
    pub default_provider_id: String,
    pub can_change_default: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderSummary {
    pub id: String,
    pub name: String,
    /// Whether the user's config.toml defines (and so may edit) it; built-ins may not.
    pub can_edit: bool,
    /// `null` for the built-in provider and for an address that could carry a secret (user
    /// info or a query).
    pub base_url: Option<String>,
    pub settings: ProviderSettings,
}

/// How the provider is reached, tagged by `type`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ProviderSettings {
    Openai,
    CustomGateway { auth: GatewayAuth },
}

/// Where a gateway's key comes from (never the key itself).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum GatewayAuth {
    None,
    #[serde(rename_all = "camelCase")]
    EnvironmentVariable {
        env_key: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderCapabilitiesReadResponse {
    pub image_generation: bool,
    pub web_search: bool,
}
