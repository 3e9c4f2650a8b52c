//! `account/*`: API-key sign-in. openturn keeps one key (the one a client gave with
//! `account/login/start {"type": "apiKey"}`); ChatGPT sign-in flows are not offered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `account/read` params.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountParams {
    /// Accepted for compatibility; an API key has nothing to refresh.
    #[serde(default)]
    pub refresh_token: Option<bool>,
}

/// The signed-in account. openturn only ever reports an API key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Account {
    ApiKey,
}

/// `account/read` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountResponse {
    /// `{"type": "apiKey"}` while a key is stored, else `null`.
    pub account: Option<Account>,
    /// Always `null`: API keys carry no user id.
    pub user_id: Option<String>,
    /// True when the active provider needs a key and has none in its environment variable, so
    /// a client should offer `account/login/start`.
    pub requires_openai_auth: bool,
}

/// `account/login/start` params: `{"type": "apiKey", "apiKey": "…"}`. Other `type`s (the
/// reference's ChatGPT and Bedrock flows) decode, so the error can say they are not offered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginAccountParams {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub api_key: Option<String>,
}

/// `account/login/start` result: the key is stored before the answer is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LoginAccountResponse {
    ApiKey,
}

/// `account/login/cancel` params.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelLoginAccountParams {
    pub login_id: String,
}

/// `canceled` or `notFound`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CancelLoginAccountStatus {
    Canceled,
    NotFound,
}

/// `account/login/cancel` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelLoginAccountResponse {
    pub status: CancelLoginAccountStatus,
}

/// `account/login/completed`: sent after a login answer. `loginId` is `null` for API-key logins,
/// which finish within the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountLoginCompletedNotification {
    pub login_id: Option<String>,
    pub success: bool,
    pub error: Option<String>,
    /// Always `null` (a desktop-app notion).
    pub onboarding_entrypoint: Option<String>,
}

/// `account/updated`: the auth mode changed (`apikey` after a login, `null` after logout).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountUpdatedNotification {
    pub auth_mode: Option<String>,
    /// Always `null`: API keys have no plan.
    pub plan_type: Option<String>,
}

/// Params of a method that takes none (`account/logout`): absent, `null` or `{}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EmptyParams {}
