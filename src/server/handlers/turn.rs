//! Turn methods.

use crate::protocol::turn::{
    EmptyResponse, TurnInterruptParams, TurnStartParams, TurnStartResponse, TurnSteerParams,
    TurnSteerResponse,
};

use crate::core::{
    CollaborationOverride, PreparedInput, SettingsOverrides, ThreadId, TurnId, TurnOptions,
};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::super::projection::in_progress_turn;
use super::params::upstream_service_tier;
use super::reply::{After, Reply};

/// Starts a turn (or steers a running one), answers, and only then lets the turn emit: the
/// response precedes `turn/started`. The input is prepared (local images read) first, so input
/// that cannot be sent is refused before anything changes: no overrides applied, no turn.
pub(crate) async fn turn_start(
    context: &ServerContext,
    params: TurnStartParams,
) -> Reply<TurnStartResponse> {
    let started = async {
        let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
        super::params::check_model_param(params.model.as_deref())?;
        let cwd = match &params.cwd {
            Some(cwd) => cwd.into(),
            None => thread.settings().cwd,
        };
        let input = prepare_input(&params.input, &cwd).await?;
        let service_tier = upstream_service_tier(params.service_tier.as_deref(), "serviceTier")?;
        let options = TurnOptions {
            output_schema: params.output_schema.clone(),
            service_tier: upstream_service_tier(
                params.service_tier_for_turn.as_deref(),
                "serviceTierForTurn",
            )?,
            ..TurnOptions::default()
        };
        let overrides = turn_overrides(&params, service_tier);
        thread.update_settings(|settings| settings.apply_overrides(overrides));
        Ok::<_, HandlerError>(thread.start_turn_with(
            input,
            params.client_user_message_id.clone(),
            options,
        )?)
    }
    .await;
    match started {
        Ok(started) => {
            let response = TurnStartResponse {
                turn: in_progress_turn(started.turn_id.to_string(), None),
            };
            Reply::then(
                response,
                started.gate.map(After::OpenGate).into_iter().collect(),
            )
        }
        Err(error) => Reply::plain(Err(error)),
    }
}

/// `turn/start` overrides stick for later turns.
/// A `turn/start`'s sticky overrides in core's terms (core applies them).
fn turn_overrides(params: &TurnStartParams, service_tier: Option<String>) -> SettingsOverrides {
    SettingsOverrides {
        model: params.model.clone(),
        cwd: params.cwd.as_ref().map(Into::into),
        approval_policy: params.approval_policy.map(convert::approval_policy_in),
        sandbox_policy: params
            .sandbox_policy
            .as_ref()
            .map(convert::sandbox_policy_in),
        reasoning_effort: params.effort.clone(),
        reasoning_summary: params.summary.clone(),
        collaboration: params
            .collaboration_mode
            .as_ref()
            .map(collaboration_override),
        service_tier,
        ..SettingsOverrides::default()
    }
}

/// `collaborationMode` (`{mode, settings: {model, reasoning_effort}}`): plan mode or not, and
/// the model and effort the client picked for the mode, which win over `model` and `effort`
/// beside it, as in the reference. A missing or empty model or effort keeps the thread's.
fn collaboration_override(mode: &serde_json::Value) -> CollaborationOverride {
    let setting = |name: &str| {
        mode["settings"][name]
            .as_str()
            .filter(|value| !value.trim().is_empty())
            .map(str::to_string)
    };
    CollaborationOverride {
        plan: mode["mode"].as_str() == Some("plan"),
        model: setting("model"),
        reasoning_effort: setting("reasoning_effort"),
    }
}

/// Client input → input ready for a turn; relative local-image paths are against `cwd`.
async fn prepare_input(
    input: &[crate::protocol::turn::UserInput],
    cwd: &std::path::Path,
) -> Result<PreparedInput, HandlerError> {
    let input = convert::user_input_in(input).map_err(HandlerError::InvalidParams)?;
    Ok(PreparedInput::prepare(input, cwd)
        .await
        .map_err(crate::core::CoreError::from)?)
}

pub(crate) async fn turn_steer(
    context: &ServerContext,
    params: TurnSteerParams,
) -> Result<TurnSteerResponse, HandlerError> {
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    let input = prepare_input(&params.input, &thread.settings().cwd).await?;
    let turn_id = thread.steer(
        &TurnId::from(params.expected_turn_id),
        input,
        params.client_user_message_id,
    )?;
    Ok(TurnSteerResponse {
        turn_id: turn_id.into_string(),
    })
}

pub(crate) fn turn_interrupt(
    context: &ServerContext,
    params: TurnInterruptParams,
) -> Result<EmptyResponse, HandlerError> {
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    thread.interrupt(&TurnId::from(params.turn_id))?;
    Ok(EmptyResponse {})
}

handler!(TurnStart, |context, params| turn_start(context, params)
    .await);
handler!(TurnSteer, |context, params| turn_steer(context, params)
    .await);
handler!(TurnInterrupt, |context, params| turn_interrupt(
    context, params
));
