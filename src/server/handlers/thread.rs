//! Thread lifecycle methods that hand out a thread: `thread/start`, `thread/resume`,
//! `thread/fork`, and the settings and `Thread` objects they share.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::Config;
use crate::core::{
    resolve_thread_settings, ConfiguredSettings, SavedSettings, SettingsOverrides, Thread,
    ThreadId, ThreadSettings, ThreadSpawn, TurnId,
};
use crate::protocol::common::ApprovalsReviewer;
use crate::protocol::notification::{
    ServerNotification, ThreadStartedNotification, ThreadStatusChangedNotification,
    TokenUsageUpdatedNotification, WarningNotification,
};
use crate::protocol::thread::{
    self as proto, ThreadForkParams, ThreadResumeParams, ThreadResumeResponse, ThreadStartParams,
    ThreadStartResponse, ThreadStatus,
};
use crate::rollout::{IndexEntry, RolloutContents};

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::super::fanout::spawn_thread_projection;
use super::super::history::{last_token_usage, turns_from_items, turns_page};
use super::reply::{After, Reply};
use super::thread_object::thread_object;
use super::thread_read::{blocking, load_contents};

/// `thread/start`: response, then the thread is announced with `thread/started`.
pub(crate) async fn thread_start(
    context: &ServerContext,
    params: ThreadStartParams,
) -> Reply<ThreadStartResponse> {
    let mut before = Vec::new();
    let result = start(context, &params, &mut before).await;
    announced(result).preceded_by(before)
}

async fn start(
    context: &ServerContext,
    params: &ThreadStartParams,
    before: &mut Vec<ServerNotification>,
) -> Result<(ThreadStartResponse, ThreadSpawn), HandlerError> {
    let config = thread_config(context, params, before)?;
    let settings = settings_from(context, &config, params, None)?;
    let spawn = context
        .threads
        .start_thread(settings, params.ephemeral.unwrap_or(false))
        .await?;
    let response = start_response(&spawn.thread, ThreadStatus::Idle, None);
    Ok((response, spawn))
}

/// The reply of a request that hands out a new thread: the response, then the thread is
/// announced (its turns left out: `thread/started` carries none).
fn announced(
    result: Result<(ThreadStartResponse, ThreadSpawn), HandlerError>,
) -> Reply<ThreadStartResponse> {
    match result {
        Ok((mut response, spawn)) => {
            let turns = std::mem::take(&mut response.thread.turns);
            let thread = response.thread.clone();
            response.thread.turns = turns;
            Reply::then(response, vec![After::Announce(Box::new((thread, spawn)))])
        }
        Err(error) => Reply::plain(Err(error)),
    }
}

/// After the response: start forwarding the thread's events, subscribe, then announce it.
pub(crate) async fn announce_started(
    context: &Arc<ServerContext>,
    thread: proto::Thread,
    spawn: ThreadSpawn,
) {
    let thread_id = spawn.thread.id.clone();
    context.subscribe(&thread_id);
    let started = spawn.thread.clone();
    spawn_thread_projection(context, thread_id, spawn.events_rx);
    // Every initialized connection hears of a new thread; only this one is subscribed.
    context
        .hub
        .broadcast(&ServerNotification::ThreadStarted(
            ThreadStartedNotification {
                thread: Box::new(thread),
            },
        ))
        .await;
    // After `thread/started`, so each server's status follows the thread's announcement.
    started.start_mcp_servers().await;
}

/// `thread/resume`: loads (or re-subscribes to) a thread and returns its turns. Loading
/// announces the thread's status before the response; the last known usage follows it
/// (docs/PROTOCOL.md §4), so a client's usage meter is right before the next turn.
pub(crate) async fn thread_resume(
    context: &Arc<ServerContext>,
    params: ThreadResumeParams,
) -> Reply<ThreadResumeResponse> {
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut goal_gate = None;
    let (result, after) =
        match resume(context, &params, &mut before, &mut after, &mut goal_gate).await {
            Ok((response, usage)) => {
                after.extend(
                    usage.map(|usage| After::Notify(ServerNotification::TokenUsageUpdated(usage))),
                );
                // A thread loaded with an active goal goes back to work on it, last.
                after.extend(goal_gate.map(After::OpenGate));
                (Ok(response), after)
            }
            Err(error) => (Err(error), Vec::new()),
        };
    Reply {
        before,
        result,
        after,
    }
}

async fn resume(
    context: &Arc<ServerContext>,
    params: &ThreadResumeParams,
    before: &mut Vec<ServerNotification>,
    after: &mut Vec<After>,
    goal_gate: &mut Option<crate::core::TurnGate>,
) -> Result<(ThreadResumeResponse, Option<TokenUsageUpdatedNotification>), HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let contents = match context.threads.get(&thread_id) {
        Ok(thread) if thread.ephemeral => None,
        Ok(thread) => Some(load_contents(thread.rollout_path()).await?),
        Err(_) => {
            let contents = load_contents_by_id(context, thread_id.as_str()).await?;
            let config = thread_config(context, &params.overrides, before)?;
            let settings = settings_from(context, &config, &params.overrides, Some(&contents))?;
            let spawn = context.threads.resume_thread(&contents, settings)?;
            let resumed = spawn.thread.clone();
            spawn_thread_projection(context, thread_id.clone(), spawn.events_rx);
            before.push(ServerNotification::ThreadStatusChanged(
                ThreadStatusChangedNotification {
                    thread_id: thread_id.to_string(),
                    status: ThreadStatus::Idle,
                },
            ));
            *goal_gate = resumed.start_goal_turn().and_then(|started| started.gate);
            after.push(After::StartMcpServers(resumed));
            // Lines skipped while loading (a torn tail after a crash, unknown types) are worth
            // telling the client, not only the log.
            before.extend(contents.warnings.iter().map(|message| {
                ServerNotification::Warning(WarningNotification {
                    message: message.clone(),
                    thread_id: Some(thread_id.to_string()),
                })
            }));
            Some(contents)
        }
    };
    let thread = context.threads.get(&thread_id)?;
    context.subscribe(&thread_id);
    let entry = contents
        .as_ref()
        .map(|c| IndexEntry::from_contents(c, false));
    let mut base = start_response(&thread, context.status_of(&thread_id), entry.as_ref());
    let mut turns_backwards_cursor = None;
    let mut items_backwards_cursor = None;
    let usage = contents
        .as_ref()
        .and_then(|c| last_token_usage(thread_id.as_str(), &c.items));
    if let Some(contents) = contents {
        let active = thread.active_turn_id();
        let limit = params.turns_limit;
        let exclude_turns = params.exclude_turns;
        // One pass off the runtime: the newest item's cursor (clients that page items from
        // the end start there), and the turns unless the client excluded them.
        let (items_cursor, page) = blocking(move || {
            let items_cursor = super::thread_items::newest_item_cursor(
                &contents,
                active.as_ref().map(TurnId::as_str),
            );
            let page = (!exclude_turns).then(|| {
                turns_page(
                    &contents.items,
                    &contents.item_times_ms,
                    active.as_ref().map(TurnId::as_str),
                    limit,
                    None,
                )
            });
            (items_cursor, page)
        })
        .await?;
        items_backwards_cursor = items_cursor?;
        if let Some(page) = page {
            let page = page?;
            base.thread.turns = page.turns;
            turns_backwards_cursor = page.backwards_cursor;
        }
    }
    let settings = thread.settings();
    let response = ThreadResumeResponse {
        base,
        // The effective mode, restored from the rollout like the other sticky settings.
        collaboration_mode: Some(serde_json::json!({
            "mode": if settings.plan_mode { "plan" } else { "default" },
            "settings": {
                "model": settings.model,
                "reasoning_effort": settings.reasoning_effort,
                "developer_instructions": settings.developer_instructions,
            },
        })),
        turns_backwards_cursor,
        items_backwards_cursor,
        initial_turns_page: None,
    };
    Ok((response, usage))
}

/// `thread/fork`: a new thread with a copy of the source's history; response, then
/// `thread/started`.
pub(crate) async fn thread_fork(
    context: &ServerContext,
    params: ThreadForkParams,
) -> Reply<ThreadStartResponse> {
    let mut before = Vec::new();
    let result = fork(context, &params, &mut before).await;
    announced(result).preceded_by(before)
}

async fn fork(
    context: &ServerContext,
    params: &ThreadForkParams,
    before: &mut Vec<ServerNotification>,
) -> Result<(ThreadStartResponse, ThreadSpawn), HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let ephemeral = params.overrides.ephemeral.unwrap_or(false);
    if ephemeral && !params.exclude_turns {
        return Err(HandlerError::InvalidRequest(
            "ephemeral paginated thread/fork requires `excludeTurns: true`".to_string(),
        ));
    }
    let source = match context.threads.get(&thread_id) {
        Ok(thread) => load_contents(thread.rollout_path())
            .await
            .map_err(|_| crate::core::CoreError::NoRollout(thread_id.to_string()))?,
        Err(_) => load_contents_by_id(context, thread_id.as_str()).await?,
    };
    let config = thread_config(context, &params.overrides, before)?;
    let settings = settings_from(context, &config, &params.overrides, Some(&source))?;
    let last_turn_id = params.last_turn_id.clone().map(TurnId::from);
    let spawn = context
        .threads
        .fork_thread(&source, last_turn_id.as_ref(), settings, ephemeral)
        .await?;
    let contents = match (ephemeral, spawn.thread.rollout_path()) {
        (false, Some(path)) => Some(load_contents(Some(path)).await?),
        _ => None,
    };
    let entry = contents
        .as_ref()
        .map(|c| IndexEntry::from_contents(c, false));
    let mut response = start_response(&spawn.thread, ThreadStatus::Idle, entry.as_ref());
    if let (false, Some(contents)) = (params.exclude_turns, contents) {
        response.thread.turns =
            blocking(move || turns_from_items(&contents.items, &contents.item_times_ms, None))
                .await?;
    }
    Ok((response, spawn))
}

/// Reads a persisted, live (not archived) thread's rollout by id.
async fn load_contents_by_id(
    context: &ServerContext,
    thread_id: &str,
) -> Result<RolloutContents, HandlerError> {
    let index = context.threads.index().clone();
    let home = context.config.home.clone();
    let id = thread_id.to_string();
    let path = tokio::task::spawn_blocking(move || {
        let from_index = index
            .get(&id)
            .ok()
            .flatten()
            .filter(|entry| !entry.archived && entry.path.exists())
            .map(|entry| entry.path);
        from_index.or_else(|| {
            crate::rollout::paths::find_rollout(&crate::rollout::paths::sessions_dir(&home), &id)
        })
    })
    .await
    .map_err(|e| HandlerError::Internal(e.to_string()))?
    .ok_or_else(|| crate::core::CoreError::NoRollout(thread_id.to_string()))?;
    load_contents(Some(path)).await
}

/// The daemon's configuration, with config.toml read again (a client that wrote it, say with
/// `modelProvider/default/set`, starts its next thread on what it wrote, as the reference
/// does), and the request's `config` object applied; what that object sets but openturn
/// ignores is told to the client before the response (into `before`).
fn thread_config(
    context: &ServerContext,
    params: &ThreadStartParams,
    before: &mut Vec<ServerNotification>,
) -> Result<Config, HandlerError> {
    let current = context.config.reloaded()?;
    Ok(match &params.config {
        Some(overrides) => {
            let config = current.with_json_overrides(overrides)?;
            before.extend(super::config::config_warnings(&config.warnings));
            config
        }
        None => current,
    })
}

/// Settings for a new or loaded thread: the configuration, what a persisted thread's rollout
/// recorded and the params, resolved by core (`core::resolve_thread_settings`); this only
/// converts the params into core's terms.
fn settings_from(
    context: &ServerContext,
    config: &Config,
    params: &ThreadStartParams,
    persisted: Option<&RolloutContents>,
) -> Result<ThreadSettings, HandlerError> {
    super::params::check_model_param(params.model.as_deref())?;
    let requested = SettingsOverrides {
        model: params.model.clone(),
        provider_id: params.model_provider.clone(),
        cwd: params.cwd.as_deref().map(absolute_cwd).transpose()?,
        base_instructions: params.base_instructions.clone(),
        developer_instructions: params.developer_instructions.clone(),
        approval_policy: params.approval_policy.map(convert::approval_policy_in),
        sandbox: params.sandbox.map(convert::sandbox_mode_in),
        dynamic_tools: params
            .dynamic_tools
            .as_ref()
            .map(|tools| convert::dynamic_tools_in(tools))
            .transpose()
            .map_err(HandlerError::InvalidParams)?,
        service_tier: super::params::upstream_service_tier(
            params.service_tier.as_deref(),
            "serviceTier",
        )?,
        ..SettingsOverrides::default()
    };
    let config_names = |key: &str| params.config.as_ref().is_some_and(|c| c.contains_key(key));
    resolve_thread_settings(
        configured_settings(context, config),
        persisted.map(SavedSettings::from_rollout),
        &config_names,
        requested,
        |provider_id| Ok(config.provider(provider_id)?),
        || std::env::current_dir().map_err(|e| HandlerError::Internal(e.to_string())),
    )
}

/// The configuration's layer of a thread's settings.
fn configured_settings(context: &ServerContext, config: &Config) -> ConfiguredSettings {
    // Read first: `user_skill_roots` takes the connection's lock.
    let user_skill_roots = super::skills::user_skill_roots(context);
    ConfiguredSettings {
        model: config.model.clone(),
        provider_id: config.model_provider_id.clone(),
        instructions: config.instructions.clone(),
        developer_instructions: config.developer_instructions.clone(),
        approval_policy: config.approval_policy,
        sandbox: config.sandbox_mode,
        sandbox_writable_roots: config.sandbox_writable_roots.clone(),
        sandbox_network_access: config.sandbox_network_access,
        protected_paths: vec![protected_home(config)],
        sandbox_isolation: config.sandbox_isolation,
        shell_environment: config.shell_environment.clone(),
        reasoning_effort: config.model_reasoning_effort.clone(),
        reasoning_summary: config.model_reasoning_summary.clone(),
        show_raw_agent_reasoning: config.show_raw_agent_reasoning,
        apply_patch_streaming_events: config.feature_enabled("apply_patch_streaming_events"),
        originator: context.connection().client_name.clone(),
        model_context_window: config.model_context_window,
        reasoning_summary_mode: config.reasoning_summary_mode,
        mcp_servers: config.mcp_servers.clone(),
        max_sampling_requests_per_turn: config.max_sampling_requests_per_turn,
        project_doc_max_bytes: config.project_doc_max_bytes,
        user_agents_file: Some(protected_home(config).join(crate::core::context::AGENTS_FILE)),
        model_catalog: config.model_catalog.clone(),
        user_skill_roots,
        skill_toggles: config.skill_toggles(),
        include_skills_instructions: config.skills_include_instructions(),
        auto_compact_token_limit: config.model_auto_compact_token_limit,
        compact_prompt: config.compact_prompt.clone(),
    }
}

/// openturn's home as an absolute path, protected from every sandboxed command: its config,
/// rollouts and credentials must not be rewritable by what the model runs.
pub(super) fn protected_home(config: &Config) -> PathBuf {
    std::path::absolute(&config.home).unwrap_or_else(|_| config.home.clone())
}

fn absolute_cwd(cwd: &str) -> Result<PathBuf, HandlerError> {
    let path = PathBuf::from(cwd);
    if !path.is_absolute() {
        return Err(HandlerError::InvalidParams(format!(
            "`cwd` must be an absolute path: {cwd}"
        )));
    }
    Ok(path)
}

/// The shared start/resume/fork result for `thread`.
pub(crate) fn start_response(
    thread: &Thread,
    status: ThreadStatus,
    entry: Option<&IndexEntry>,
) -> ThreadStartResponse {
    let settings = thread.settings();
    let cwd = settings.cwd.display().to_string();
    ThreadStartResponse {
        thread: thread_object(thread, status, entry),
        model: settings.model.clone(),
        model_provider: settings.provider.id.clone(),
        service_tier: settings.service_tier.clone(),
        cwd: cwd.clone(),
        approval_policy: convert::approval_policy_out(settings.approval_policy),
        approvals_reviewer: ApprovalsReviewer::User,
        sandbox: convert::sandbox_policy_out(&settings),
        reasoning_effort: settings.reasoning_effort.clone(),
        instruction_sources: Vec::new(),
        disabled_plugin_ids: Vec::new(),
        runtime_workspace_roots: vec![cwd],
        active_permission_profile: None,
    }
}

handler!(ThreadStart, |context, params| thread_start(context, params)
    .await);
handler!(ThreadResume, |context, params| thread_resume(
    context, params
)
.await);
handler!(ThreadFork, |context, params| thread_fork(context, params)
    .await);
