//! `config/read`: the effective configuration, with config.toml's snake_case keys.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadParams {
    #[serde(default)]
    pub include_layers: bool,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConfigReadResponse {
    /// config.toml keys (snake_case), secrets redacted.
    pub config: Map<String, Value>,
    /// Where each dotted key came from.
    pub origins: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<Vec<Value>>,
}
