//! Thread methods.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::Config;
use crate::core::settings::DEFAULT_INSTRUCTIONS;
use crate::core::{Thread, ThreadSettings, ThreadSpawn};
use crate::protocol::common::ApprovalsReviewer;
use crate::protocol::notification::{ServerNotification, ThreadStartedNotification};
use crate::protocol::thread::{
    self as proto, ThreadStartParams, ThreadStartResponse, ThreadStatus,
};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::super::fanout::spawn_thread_projection;

pub async fn thread_start(
    context: &Arc<ServerContext>,
    params: ThreadStartParams,
) -> Result<(ThreadStartResponse, ThreadSpawn), HandlerError> {
    let config = match &params.config {
        Some(overrides) => context.config.with_json_overrides(overrides)?,
        None => context.config.clone(),
    };
    let settings = settings_from(context, &config, &params)?;
    let spawn = context
        .threads
        .start_thread(settings, params.ephemeral.unwrap_or(false))
        .await?;
    let response = start_response(&spawn.thread, ThreadStatus::Idle);
    Ok((response, spawn))
}

/// After the response: start forwarding the thread's events, then announce it.
pub async fn announce_started(
    context: &Arc<ServerContext>,
    thread: proto::Thread,
    spawn: ThreadSpawn,
) {
    spawn_thread_projection(context, spawn.thread.id.to_string(), spawn.events_rx);
    let _ = context
        .outgoing
        .send_notification(&ServerNotification::ThreadStarted(
            ThreadStartedNotification {
                thread: Box::new(thread),
            },
        ))
        .await;
}

fn settings_from(
    context: &ServerContext,
    config: &Config,
    params: &ThreadStartParams,
) -> Result<ThreadSettings, HandlerError> {
    let provider_id = params
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider_id.clone());
    let provider = config.provider(&provider_id)?;
    let cwd = match &params.cwd {
        Some(cwd) => {
            let path = PathBuf::from(cwd);
            if !path.is_absolute() {
                return Err(HandlerError::InvalidParams(format!(
                    "`cwd` must be an absolute path: {cwd}"
                )));
            }
            path
        }
        None => std::env::current_dir().map_err(|e| HandlerError::Internal(e.to_string()))?,
    };
    Ok(ThreadSettings {
        model: params.model.clone().unwrap_or_else(|| config.model.clone()),
        provider,
        cwd,
        base_instructions: params
            .base_instructions
            .clone()
            .or_else(|| config.instructions.clone())
            .unwrap_or_else(|| DEFAULT_INSTRUCTIONS.to_string()),
        developer_instructions: params
            .developer_instructions
            .clone()
            .or_else(|| config.developer_instructions.clone()),
        approval_policy: params
            .approval_policy
            .map(convert::approval_policy_in)
            .unwrap_or(config.approval_policy),
        sandbox: params
            .sandbox
            .map(convert::sandbox_mode_in)
            .unwrap_or(config.sandbox_mode),
        reasoning_effort: config.model_reasoning_effort.clone(),
        reasoning_summary: config.model_reasoning_summary.clone(),
        show_raw_agent_reasoning: config.show_raw_agent_reasoning,
        originator: context.connection().client_name.clone(),
        model_context_window: config.model_context_window,
        reasoning_summary_mode: config.reasoning_summary_mode,
        plan_mode: false,
        dynamic_tools: match &params.dynamic_tools {
            Some(tools) => convert::dynamic_tools_in(tools).map_err(HandlerError::InvalidParams)?,
            None => Vec::new(),
        },
    })
}

/// The shared start/resume/fork result for `thread`.
pub fn start_response(thread: &Thread, status: ThreadStatus) -> ThreadStartResponse {
    let settings = thread.settings();
    let cwd = settings.cwd.display().to_string();
    ThreadStartResponse {
        thread: thread_object(thread, status),
        model: settings.model.clone(),
        model_provider: settings.provider.id.clone(),
        service_tier: None,
        cwd: cwd.clone(),
        approval_policy: convert::approval_policy_out(settings.approval_policy),
        approvals_reviewer: ApprovalsReviewer::User,
        sandbox: convert::sandbox_policy_out(settings.sandbox, &cwd),
        reasoning_effort: settings.reasoning_effort.clone(),
        instruction_sources: Vec::new(),
        disabled_plugin_ids: Vec::new(),
    }
}

pub fn thread_object(thread: &Thread, status: ThreadStatus) -> proto::Thread {
    let settings = thread.settings();
    proto::Thread {
        id: thread.id.to_string(),
        session_id: thread.id.to_string(),
        preview: String::new(),
        ephemeral: thread.ephemeral,
        model_provider: settings.provider.id.clone(),
        model: Some(settings.model.clone()),
        reasoning_effort: settings.reasoning_effort.clone(),
        created_at: thread.created_at,
        updated_at: thread.created_at,
        recency_at: Some(thread.created_at),
        status,
        path: thread.rollout_path().map(|p| p.display().to_string()),
        cwd: settings.cwd.display().to_string(),
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        source: "vscode".to_string(),
        originator: Some(settings.originator.clone()).filter(|o| !o.is_empty()),
        name: thread.name(),
        forked_from_id: thread.forked_from_id.clone(),
        parent_thread_id: None,
        agent_nickname: None,
        agent_role: None,
        git_info: None,
        project_id: None,
        section: None,
        section_entered_at: None,
        thread_source: None,
        history_mode: "paginated".to_string(),
        turns: Vec::new(),
    }
}
