//! `account/rateLimits/read`: the last rate-limit snapshot the provider reported.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::notification::RateLimitSnapshot;

/// What the client can do with the answer; openturn reads the flags and needs neither (it has
/// no reset credits or reserve pools to look up).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountRateLimitsParams {
    #[serde(default)]
    pub exclude_reset_credit_details: bool,
    #[serde(default)]
    pub supports_luna_reserve: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountRateLimitsResponse {
    /// The snapshot, as `account/rateLimits/updated` last carried it.
    pub rate_limits: RateLimitSnapshot,
    /// The same snapshot under its limit id (`codex`).
    pub rate_limits_by_limit_id: Option<BTreeMap<String, RateLimitSnapshot>>,
    /// Filled only by the reference's own backend; always `null` here.
    pub account_id: Option<String>,
    pub ordinary_usage_allowed: Option<bool>,
    pub rate_limit_reset_credits: Option<Value>,
}
