//! `thread/settings/update` and `turn/settings/update` (experimental API): params converted
//! into core's terms; core applies them (`core/thread_settings.rs`) and decides their
//! precedence (`core/settings.rs`). A thread's update is answered `{}` and then announced with
//! `thread/settings/updated`.

use std::path::PathBuf;

use crate::core::{
    CollaborationOverride, SettingsOverrides, ThreadId, ThreadSettings, TurnId, TurnSettingsPatch,
    TurnSettingsUpdate,
};
use crate::protocol::common::ApprovalsReviewer;
use crate::protocol::notification::ServerNotification;
use crate::protocol::thread_settings::{
    CollaborationMode, CollaborationSettings, ModeKind, ThreadSettingsSnapshot,
    ThreadSettingsUpdateParams, ThreadSettingsUpdatedNotification, TurnSettingsUpdateParams,
    TurnSettingsUpdateResponse, TurnSettingsUpdateStatus,
};
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::params::{check_model_param, upstream_service_tier};
use super::reply::{After, Reply};

/// The reference answers these methods only on a connection that opted into the experimental
/// API at `initialize`.
pub(super) fn require_experimental(
    context: &ServerContext,
    method: &str,
) -> Result<(), HandlerError> {
    if context.connection().experimental_api {
        return Ok(());
    }
    Err(HandlerError::InvalidRequest(format!(
        "{method} requires experimentalApi capability"
    )))
}

pub(crate) async fn thread_settings_update(
    context: &ServerContext,
    params: ThreadSettingsUpdateParams,
) -> Reply<EmptyResponse> {
    match update_thread(context, params).await {
        Ok(updated) => Reply::then(
            EmptyResponse {},
            vec![After::Notify(ServerNotification::ThreadSettingsUpdated(
                updated,
            ))],
        ),
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn update_thread(
    context: &ServerContext,
    params: ThreadSettingsUpdateParams,
) -> Result<ThreadSettingsUpdatedNotification, HandlerError> {
    require_experimental(context, "thread/settings/update")?;
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    let overrides = thread_overrides(&params)?;
    let settings = thread.update_thread_settings(overrides).await?;
    Ok(ThreadSettingsUpdatedNotification {
        thread_id: params.thread_id,
        thread_settings: snapshot(&settings),
    })
}

fn thread_overrides(
    params: &ThreadSettingsUpdateParams,
) -> Result<SettingsOverrides, HandlerError> {
    check_model_param(params.model.as_deref())?;
    if params.permissions.is_some() {
        return Err(HandlerError::InvalidParams(
            "`permissions`: named permission profiles cannot be selected here; send \
             `sandboxPolicy` instead"
                .to_string(),
        ));
    }
    let cwd = match &params.cwd {
        Some(cwd) if !PathBuf::from(cwd).is_absolute() => {
            return Err(HandlerError::InvalidParams(format!(
                "`cwd` must be an absolute path: {cwd}"
            )))
        }
        cwd => cwd.as_ref().map(PathBuf::from),
    };
    let collaboration = match &params.collaboration_mode {
        Some(mode) => {
            if mode.settings.model.trim().is_empty() {
                return Err(HandlerError::InvalidParams(
                    "`collaborationMode.settings.model` must not be empty".to_string(),
                ));
            }
            Some(CollaborationOverride {
                plan: mode.mode == ModeKind::Plan,
                model: Some(mode.settings.model.clone()),
                reasoning_effort: mode.settings.reasoning_effort.clone(),
            })
        }
        None => None,
    };
    let (service_tier, clear_service_tier) = match &params.service_tier {
        Some(Some(tier)) => (upstream_service_tier(Some(tier), "serviceTier")?, false),
        Some(None) => (None, true),
        None => (None, false),
    };
    Ok(SettingsOverrides {
        model: params.model.clone(),
        cwd,
        approval_policy: params.approval_policy.map(convert::approval_policy_in),
        sandbox_policy: params
            .sandbox_policy
            .as_ref()
            .map(convert::sandbox_policy_in),
        reasoning_effort: params.effort.clone(),
        reasoning_summary: params.summary.map(|summary| summary.as_str().to_string()),
        service_tier,
        clear_service_tier,
        collaboration,
        ..SettingsOverrides::default()
    })
}

/// A thread's settings as `thread/settings/updated` shows them.
fn snapshot(settings: &ThreadSettings) -> ThreadSettingsSnapshot {
    ThreadSettingsSnapshot {
        disabled_plugin_ids: Vec::new(),
        cwd: settings.cwd.display().to_string(),
        approval_policy: convert::approval_policy_out(settings.approval_policy),
        approvals_reviewer: ApprovalsReviewer::User,
        sandbox_policy: convert::sandbox_policy_out(settings),
        active_permission_profile: None,
        model: settings.model.clone(),
        model_provider: settings.provider.id.clone(),
        service_tier: settings.service_tier.clone(),
        effort: settings.reasoning_effort.clone(),
        summary: settings.reasoning_summary.clone(),
        collaboration_mode: CollaborationMode {
            mode: if settings.plan_mode {
                ModeKind::Plan
            } else {
                ModeKind::Default
            },
            settings: CollaborationSettings {
                model: settings.model.clone(),
                reasoning_effort: settings.reasoning_effort.clone(),
                developer_instructions: None,
            },
        },
        personality: None,
    }
}

pub(crate) fn turn_settings_update(
    context: &ServerContext,
    params: TurnSettingsUpdateParams,
) -> Result<TurnSettingsUpdateResponse, HandlerError> {
    require_experimental(context, "turn/settings/update")?;
    // As the reference: changing a running turn is a feature a configuration turns on.
    if !context.config.step_model_switching {
        return Err(HandlerError::InvalidRequest(
            "turn settings updates require the step_model_switching feature".to_string(),
        ));
    }
    check_model_param(params.model.as_deref())?;
    let service_tier = match &params.service_tier {
        Some(Some(tier)) => Some(upstream_service_tier(Some(tier), "serviceTier")?),
        Some(None) => Some(None),
        None => None,
    };
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    let patch = TurnSettingsPatch {
        model: params.model,
        reasoning_effort: params.effort,
        reasoning_summary: params.summary.map(|summary| summary.as_str().to_string()),
        service_tier,
    };
    let status = match thread.update_turn_settings(&TurnId::from(params.turn_id), patch) {
        TurnSettingsUpdate::Applied => TurnSettingsUpdateStatus::Applied,
        TurnSettingsUpdate::TargetUnavailable => TurnSettingsUpdateStatus::TargetUnavailable,
    };
    Ok(TurnSettingsUpdateResponse { status })
}

handler!(ThreadSettingsUpdate, |context, params| {
    thread_settings_update(context, params).await
});
handler!(TurnSettingsUpdate, |context, params| turn_settings_update(
    context, params
));
