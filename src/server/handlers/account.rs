//! `account/*`: API-key sign-in. A key given with `account/login/start {"type": "apiKey"}` is
//! stored in `$OPENTURN_HOME/auth.json` (0600, replaced atomically) and used by providers that
//! take OpenAI sign-in (`requires_openai_auth`) when they have no key of their own in the
//! environment; `account/logout` removes it. The key is never
//! echoed: not in answers, notifications, errors or logs. ChatGPT sign-in is not offered.

use crate::core::account::{
    has_stored_api_key, provider_takes_login, remove_api_key, store_api_key,
};
use crate::protocol::account::{
    Account, AccountLoginCompletedNotification, AccountUpdatedNotification,
    CancelLoginAccountParams, CancelLoginAccountResponse, CancelLoginAccountStatus,
    GetAccountParams, GetAccountResponse, LoginAccountParams, LoginAccountResponse,
};
use crate::protocol::notification::ServerNotification;
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::reply::{After, Reply};

/// The reference's ChatGPT and Bedrock sign-in kinds: recognised, so the error can say what
/// openturn offers instead of calling them unknown.
const UNSUPPORTED_LOGIN_KINDS: &[&str] = &[
    "chatgpt",
    "chatgptDeviceCode",
    "chatgptAuthTokens",
    "amazonBedrock",
    "amazonBedrockAccessKeys",
];

pub(crate) async fn account_read(
    context: &ServerContext,
    _params: GetAccountParams,
) -> Result<GetAccountResponse, HandlerError> {
    let provider = context.config.provider(&context.config.model_provider_id)?;
    let requires_openai_auth = provider_takes_login(&provider);
    // As the reference: a provider that takes no sign-in has no account, whatever is stored
    // (it never receives the stored key).
    if !requires_openai_auth {
        return Ok(GetAccountResponse {
            account: None,
            user_id: None,
            requires_openai_auth,
        });
    }
    let home = context.config.home.clone();
    let stored = tokio::task::spawn_blocking(move || has_stored_api_key(&home))
        .await
        .map_err(|error| HandlerError::Internal(error.to_string()))?
        .map_err(|error| HandlerError::Internal(error.to_string()))?;
    Ok(GetAccountResponse {
        account: stored.then_some(Account::ApiKey),
        user_id: None,
        requires_openai_auth,
    })
}

/// Stores the key, answers, then announces `account/login/completed` and `account/updated` (in
/// that order, after the answer, as the reference does).
pub(crate) async fn account_login_start(
    context: &ServerContext,
    params: LoginAccountParams,
) -> Reply<LoginAccountResponse> {
    match login_start(context, params).await {
        Ok(()) => {
            let completed = AccountLoginCompletedNotification {
                login_id: None,
                success: true,
                error: None,
                onboarding_entrypoint: None,
            };
            Reply::then(
                LoginAccountResponse::ApiKey,
                vec![
                    After::Notify(ServerNotification::AccountLoginCompleted(completed)),
                    After::Notify(auth_mode_updated(Some("apikey"))),
                ],
            )
        }
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn login_start(
    context: &ServerContext,
    params: LoginAccountParams,
) -> Result<(), HandlerError> {
    let key = match params.kind.as_str() {
        "apiKey" => params
            .api_key
            .map(|key| key.trim().to_string())
            .filter(|key| !key.is_empty())
            .ok_or_else(|| {
                HandlerError::InvalidParams(
                    "`apiKey`: a non-empty API key is required for `type: apiKey`".to_string(),
                )
            })?,
        kind if UNSUPPORTED_LOGIN_KINDS.contains(&kind) => {
            return Err(HandlerError::InvalidRequest(format!(
                "`type: {kind}` sign-in is not supported by openturn: log in with \
                 `{{\"type\": \"apiKey\", \"apiKey\": \"...\"}}` instead"
            )))
        }
        other => {
            return Err(HandlerError::InvalidParams(format!(
                "`type`: unknown login type `{other}`; openturn supports `apiKey`"
            )))
        }
    };
    let home = context.config.home.clone();
    tokio::task::spawn_blocking(move || store_api_key(&home, key))
        .await
        .map_err(|error| HandlerError::Internal(error.to_string()))?
        .map_err(|error| HandlerError::Internal(error.to_string()))?;
    tracing::info!("an API key was stored by account/login/start");
    Ok(())
}

/// API-key logins finish within their request, so there is never a login to cancel.
pub(crate) fn account_login_cancel(
    params: CancelLoginAccountParams,
) -> Result<CancelLoginAccountResponse, HandlerError> {
    if params.login_id.trim().is_empty() {
        return Err(HandlerError::InvalidParams(
            "`loginId` must not be empty".to_string(),
        ));
    }
    Ok(CancelLoginAccountResponse {
        status: CancelLoginAccountStatus::NotFound,
    })
}

/// Removes the stored key, answers, then announces `account/updated` with no auth mode.
pub(crate) async fn account_logout(context: &ServerContext) -> Reply<EmptyResponse> {
    let home = context.config.home.clone();
    let removed = tokio::task::spawn_blocking(move || remove_api_key(&home))
        .await
        .map_err(|error| HandlerError::Internal(error.to_string()))
        .and_then(|removed| removed.map_err(|error| HandlerError::Internal(error.to_string())));
    match removed {
        Ok(removed) => {
            if removed {
                tracing::info!("the stored API key was removed by account/logout");
            }
            Reply::then(
                EmptyResponse {},
                vec![After::Notify(auth_mode_updated(None))],
            )
        }
        Err(error) => Reply::plain(Err(error)),
    }
}

fn auth_mode_updated(auth_mode: Option<&str>) -> ServerNotification {
    ServerNotification::AccountUpdated(AccountUpdatedNotification {
        auth_mode: auth_mode.map(str::to_string),
        plan_type: None,
    })
}

handler!(AccountRead, |context, params| account_read(context, params)
    .await);
handler!(AccountLoginStart, |context, params| account_login_start(
    context, params
)
.await);
handler!(AccountLoginCancel, |_context, params| account_login_cancel(
    params
));
handler!(AccountLogout, |context, _params| account_logout(context)
    .await);
