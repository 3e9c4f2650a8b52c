//! A model provider's connection settings, as configured in `[model_providers.<id>]`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which transport speaks to the provider's `/responses` endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    #[default]
    Responses,
    ResponsesWebsocket,
}

/// Everything needed to send a request to one provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// The key of the provider in `model_providers`; filled in by the config loader.
    #[serde(default, skip_serializing)]
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Environment variable that holds the API key; `None` means no auth header is sent.
    #[serde(default)]
    pub env_key: Option<String>,
    #[serde(default)]
    pub wire_api: WireApi,
    #[serde(default)]
    pub query_params: BTreeMap<String, String>,
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Header name → environment variable whose value is sent when set.
    #[serde(default)]
    pub env_http_headers: BTreeMap<String, String>,
    /// Send the key as `api-key: KEY` (Azure) instead of `Authorization: Bearer KEY`.
    #[serde(default)]
    pub api_key_header: Option<String>,
    #[serde(default = "default_request_max_retries")]
    pub request_max_retries: u32,
    #[serde(default = "default_stream_max_retries")]
    pub stream_max_retries: u32,
    #[serde(default = "default_stream_idle_timeout_ms")]
    pub stream_idle_timeout_ms: u64,
    /// The provider takes OpenAI sign-in: the key stored by `account/login/start` when its own
    /// `env_key` gives none, and `account/read` reports it as needing one. True for the built-in
    /// `openai` provider; other providers never receive the stored key unless they set it.
    #[serde(default)]
    pub requires_openai_auth: bool,
    /// Where a key stored by `account/login/start` lives (`$OPENTURN_HOME/auth.json`); filled in
    /// by the config loader, never read from config.toml.
    #[serde(skip)]
    pub stored_key_file: Option<std::path::PathBuf>,
}

fn default_base_url() -> String {
    "https://api.openai.com/v1".to_string()
}
fn default_request_max_retries() -> u32 {
    4
}
fn default_stream_max_retries() -> u32 {
    5
}
fn default_stream_idle_timeout_ms() -> u64 {
    300_000
}

impl ProviderInfo {
    /// The built-in OpenAI provider.
    pub fn openai() -> ProviderInfo {
        ProviderInfo {
            id: "openai".to_string(),
            name: "OpenAI".to_string(),
            base_url: default_base_url(),
            env_key: Some("OPENAI_API_KEY".to_string()),
            wire_api: WireApi::Responses,
            query_params: BTreeMap::new(),
            http_headers: BTreeMap::new(),
            env_http_headers: BTreeMap::new(),
            api_key_header: None,
            request_max_retries: default_request_max_retries(),
            stream_max_retries: default_stream_max_retries(),
            stream_idle_timeout_ms: default_stream_idle_timeout_ms(),
            requires_openai_auth: true,
            stored_key_file: None,
        }
    }

    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_millis(self.stream_idle_timeout_ms.max(1))
    }

    /// The name to show in errors: the configured display name, else the id.
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            &self.id
        } else {
            &self.name
        }
    }

    /// `{base_url}/responses`.
    pub fn responses_url(&self) -> String {
        format!("{}/responses", self.base_url.trim_end_matches('/'))
    }

    /// `{base_url}/models`: where an OpenAI-style provider lists its models.
    pub fn models_url(&self) -> String {
        format!("{}/models", self.base_url.trim_end_matches('/'))
    }
}
