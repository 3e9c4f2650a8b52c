//! `account/rateLimits/read`: answers with the last rate-limit snapshot a provider reported in
//! its response headers (the one `account/rateLimits/updated` carried), or, before any, with
//! the reference's error.

use std::collections::BTreeMap;

use crate::protocol::rate_limits::{GetAccountRateLimitsParams, GetAccountRateLimitsResponse};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The reference's text when it has no snapshot to give (it asks for a sign-in that would
/// fetch one; openturn only has what providers reported).
const NO_SNAPSHOT: &str = "codex account authentication required to read rate limits";

pub(crate) fn account_rate_limits_read(
    context: &ServerContext,
    _params: GetAccountRateLimitsParams,
) -> Result<GetAccountRateLimitsResponse, HandlerError> {
    let snapshot = context
        .last_rate_limits()
        .ok_or_else(|| HandlerError::InvalidRequest(NO_SNAPSHOT.to_string()))?;
    let by_id = snapshot
        .limit_id
        .clone()
        .map(|id| BTreeMap::from([(id, snapshot.clone())]));
    Ok(GetAccountRateLimitsResponse {
        rate_limits: snapshot,
        rate_limits_by_limit_id: by_id,
        account_id: None,
        ordinary_usage_allowed: None,
        rate_limit_reset_credits: None,
    })
}

handler!(AccountRateLimitsRead, |context, params| {
    account_rate_limits_read(context, params)
});
