//! Request handlers, one file per resource. Each returns its typed result or a `HandlerError`;
//! [`handle`] writes exactly one response per request.

mod account;
mod command_exec;
mod compact;
mod config;
mod initialize;
mod mcp;
mod permission_profile;
mod skills;
mod thread;
mod thread_admin;
mod thread_items;
mod thread_read;
mod turn;

use std::sync::Arc;

use serde::Serialize;

use crate::protocol::jsonrpc::RequestId;
use crate::protocol::methods::ClientRequest;

use super::context::ServerContext;
use super::errors::{handler_error, HandlerError};

/// Runs one decoded request and writes its response (or error).
pub async fn handle(context: &Arc<ServerContext>, id: RequestId, request: ClientRequest) {
    match request {
        ClientRequest::Initialize(params) => {
            respond(context, &id, initialize::initialize(context, params)).await;
            config::send_config_warnings(context, &context.config.warnings).await;
        }
        ClientRequest::ThreadStart(params) => match thread::thread_start(context, params).await {
            Ok((response, spawn)) => {
                let _ = context.outgoing.send_response(&id, &response).await;
                thread::announce_started(context, response.thread, spawn).await;
            }
            Err(error) => respond_error(context, &id, &error).await,
        },
        ClientRequest::ThreadResume(params) => thread::thread_resume(context, &id, params).await,
        ClientRequest::ThreadFork(params) => thread::thread_fork(context, &id, params).await,
        ClientRequest::ThreadList(params) => {
            respond(
                context,
                &id,
                thread_read::thread_list(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadRead(params) => {
            respond(
                context,
                &id,
                thread_read::thread_read(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadArchive(params) => {
            thread_admin::thread_archive(context, &id, params).await
        }
        ClientRequest::ThreadUnarchive(params) => {
            thread_admin::thread_unarchive(context, &id, params).await
        }
        ClientRequest::ThreadSetName(params) => {
            thread_admin::thread_set_name(context, &id, params).await
        }
        ClientRequest::ThreadLoadedList(params) => {
            respond(
                context,
                &id,
                thread_read::thread_loaded_list(context, params),
            )
            .await
        }
        ClientRequest::ThreadUnsubscribe(params) => {
            respond(
                context,
                &id,
                thread_admin::thread_unsubscribe(context, params),
            )
            .await
        }
        ClientRequest::TurnStart(params) => turn::turn_start(context, &id, params).await,
        ClientRequest::TurnSteer(params) => {
            respond(context, &id, turn::turn_steer(context, params).await).await
        }
        ClientRequest::TurnInterrupt(params) => {
            respond(context, &id, turn::turn_interrupt(context, params)).await
        }
        ClientRequest::ModelList(params) => {
            respond(context, &id, config::model_list(context, params)).await
        }
        ClientRequest::ConfigRead(params) => {
            respond(context, &id, config::config_read(context, params)).await
        }
        ClientRequest::CommandExec(params) => command_exec::spawn_command_exec(context, id, params),
        ClientRequest::AccountRead(params) => {
            respond(context, &id, account::account_read(context, params).await).await
        }
        ClientRequest::AccountLoginStart(params) => {
            if let Err(error) = account::account_login_start(context, &id, params).await {
                respond_error(context, &id, &error).await;
            }
        }
        ClientRequest::AccountLoginCancel(params) => {
            respond(context, &id, account::account_login_cancel(params)).await
        }
        ClientRequest::AccountLogout(_) => {
            if let Err(error) = account::account_logout(context, &id).await {
                respond_error(context, &id, &error).await;
            }
        }
        ClientRequest::SkillsList(params) => {
            respond(context, &id, skills::skills_list(context, params).await).await
        }
        ClientRequest::SkillsExtraRootsSet(params) => {
            respond(
                context,
                &id,
                skills::skills_extra_roots_set(context, params),
            )
            .await
        }
        ClientRequest::PermissionProfileList(params) => {
            respond(
                context,
                &id,
                permission_profile::permission_profile_list(params),
            )
            .await
        }
        ClientRequest::ThreadItemsList(params) => {
            respond(
                context,
                &id,
                thread_items::thread_items_list(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadCompactStart(params) => {
            compact::thread_compact_start(context, &id, params).await
        }
        ClientRequest::McpServerStatusList(params) => {
            respond(context, &id, mcp::mcp_server_status_list(context, params)).await
        }
        ClientRequest::ThreadGoalGet(params) => {
            respond(
                context,
                &id,
                permission_profile::thread_goal_get(context, params).await,
            )
            .await
        }
    }
}

async fn respond<T: Serialize>(
    context: &ServerContext,
    id: &RequestId,
    result: Result<T, HandlerError>,
) {
    match result {
        Ok(value) => {
            let _ = context.outgoing.send_response(id, &value).await;
        }
        Err(error) => respond_error(context, id, &error).await,
    }
}

async fn respond_error(context: &ServerContext, id: &RequestId, error: &HandlerError) {
    tracing::debug!(%id, %error, "request failed");
    let _ = context
        .outgoing
        .send_error(Some(id), &handler_error(error))
        .await;
}
