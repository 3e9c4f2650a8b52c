//! `thread/goal/get`, `thread/goal/set` and `thread/goal/clear`: a thread's goal for the client.
//! Reading works on any stored thread (a thread that is not loaded is read from its rollout);
//! changing one needs the thread loaded, because an active goal runs turns on it. Setting an
//! active goal on an idle thread starts the goal's first turn right after the response and its
//! `thread/goal/updated`.

use std::sync::Arc;

use crate::core::goal::{GoalError, GoalRequest};
use crate::core::manager::goal_in_rollout;
use crate::core::{Thread, ThreadId};
use crate::protocol::goal::{
    ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalClearedNotification,
    ThreadGoalGetParams, ThreadGoalGetResponse, ThreadGoalSetParams, ThreadGoalSetResponse,
    ThreadGoalUpdatedNotification,
};
use crate::protocol::notification::ServerNotification;

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::reply::{After, Reply};
use super::thread_read::{find_entry, load_contents};

pub(crate) async fn thread_goal_get(
    context: &ServerContext,
    params: ThreadGoalGetParams,
) -> Result<ThreadGoalGetResponse, HandlerError> {
    let thread_id = ThreadId::parse(&params.thread_id)?;
    let goal = match context.threads.get(&thread_id) {
        Ok(thread) => thread.goal(),
        Err(_) => {
            let entry = find_entry(context, thread_id.as_str())
                .await?
                .ok_or_else(|| not_found(&thread_id))?;
            goal_in_rollout(&load_contents(Some(entry.path)).await?.items)
        }
    };
    Ok(ThreadGoalGetResponse {
        goal: goal.map(|goal| convert::goal(thread_id.as_str(), &goal)),
    })
}

pub(crate) async fn thread_goal_set(
    context: &ServerContext,
    params: ThreadGoalSetParams,
) -> Reply<ThreadGoalSetResponse> {
    match set(context, params).await {
        Ok((response, after)) => Reply::then(response, after),
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn set(
    context: &ServerContext,
    params: ThreadGoalSetParams,
) -> Result<(ThreadGoalSetResponse, Vec<After>), HandlerError> {
    let thread = loaded(context, &params.thread_id).await?;
    let request = GoalRequest {
        objective: params.objective,
        status: params.status.map(convert::goal_status_in),
        token_budget: params.token_budget,
    };
    let goal = thread.set_goal(request).await.map_err(goal_error)?;
    let wire = convert::goal(thread.id.as_str(), &goal);
    let mut after = vec![After::Notify(ServerNotification::ThreadGoalUpdated(
        ThreadGoalUpdatedNotification {
            thread_id: thread.id.to_string(),
            turn_id: thread.active_turn_id().map(|id| id.to_string()),
            goal: wire.clone(),
        },
    ))];
    // An active goal on an idle thread starts working at once; with a turn running, the goal
    // takes over when it ends.
    if let Some(gate) = thread.start_goal_turn().and_then(|started| started.gate) {
        after.push(After::OpenGate(gate));
    }
    Ok((ThreadGoalSetResponse { goal: wire }, after))
}

pub(crate) async fn thread_goal_clear(
    context: &ServerContext,
    params: ThreadGoalClearParams,
) -> Reply<ThreadGoalClearResponse> {
    let thread = match loaded(context, &params.thread_id).await {
        Ok(thread) => thread,
        Err(error) => return Reply::plain(Err(error)),
    };
    let cleared = thread.clear_goal().await;
    let after = if cleared {
        vec![After::Notify(ServerNotification::ThreadGoalCleared(
            ThreadGoalClearedNotification {
                thread_id: thread.id.to_string(),
            },
        ))]
    } else {
        Vec::new()
    };
    Reply::then(ThreadGoalClearResponse { cleared }, after)
}

/// The loaded thread `thread_id` names. A stored thread that is not loaded is told apart from
/// one that does not exist, so the client knows to resume it first.
async fn loaded(context: &ServerContext, thread_id: &str) -> Result<Arc<Thread>, HandlerError> {
    let thread_id = ThreadId::parse(thread_id)?;
    if let Ok(thread) = context.threads.get(&thread_id) {
        return Ok(thread);
    }
    match find_entry(context, thread_id.as_str()).await? {
        Some(_) => Err(HandlerError::InvalidRequest(format!(
            "thread {thread_id} is not loaded; resume it before changing its goal"
        ))),
        None => Err(not_found(&thread_id)),
    }
}

fn not_found(thread_id: &ThreadId) -> HandlerError {
    HandlerError::InvalidRequest(format!("thread not found: {thread_id}"))
}

/// Goal refusals: a bad field is bad params (named in the message); no goal to change is a
/// request the thread's state does not allow.
fn goal_error(error: GoalError) -> HandlerError {
    match error {
        GoalError::EmptyObjective | GoalError::NonPositiveBudget(_) => {
            HandlerError::InvalidParams(error.to_string())
        }
        _ => HandlerError::InvalidRequest(error.to_string()),
    }
}

handler!(ThreadGoalGet, |context, params| thread_goal_get(
    context, params
)
.await);
handler!(ThreadGoalSet, |context, params| thread_goal_set(
    context, params
)
.await);
handler!(ThreadGoalClear, |context, params| thread_goal_clear(
    context, params
)
.await);
