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

/// `modelProvider/default/set` params: the provider new threads use (`model_provider` in the
/// user's config.toml). The answer is the config write's ([`super::config_write::ConfigWriteResponse`]).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderDefaultSetParams {
    /// A configured provider's id.
    pub provider_id: String,
}

/// `modelProvider/config/write` params: one provider's settings to change or create.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelProviderConfigWriteParams {
    pub settings: ProviderSettingsPatch,
}

/// What to change, tagged by `type`. A field left out keeps its value; an explicit `null`
/// clears a nullable one.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ProviderSettingsPatch {
    /// A Responses-API gateway of the user's: `providerId` edits that table, none creates one
    /// (its id made from `name`).
    #[serde(rename_all = "camelCase")]
    CustomGateway {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "Option<String>")]
        base_url: Option<Option<String>>,
        #[serde(
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "Option<String>")]
        env_key: Option<Option<String>>,
    },
    /// The reference's Amazon Bedrock providers, which openturn cannot reach: refused.
    #[serde(rename_all = "camelCase")]
    Bedrock {
        provider_id: String,
        #[serde(default)]
        profile: Option<String>,
        #[serde(default)]
        region: Option<String>,
    },
    /// The reference's Google Cloud provider, which openturn cannot reach: refused.
    #[serde(rename_all = "camelCase")]
    Gcp {
        provider_id: String,
        #[serde(default)]
        credential_file: Option<String>,
        #[serde(default)]
        location: Option<String>,
        #[serde(default)]
        project_id: Option<String>,
    },
}

/// A field that is present: `Some(None)` for an explicit `null`, told apart from a field left
/// out (`None`, by `default`).
fn present<'de, D>(deserializer: D) -> Result<Option<Option<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<String>::deserialize(deserializer).map(Some)
}

/// `modelProvider/config/write` result: the provider as `modelProvider/list` now shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelProviderConfigWriteResponse {
    pub provider: ModelProviderSummary,
}
