//! Request handlers, one file per resource. Each returns its typed result or a `HandlerError`,
//! as a [`reply::Reply`] when notifications go before or after it; [`handle`] is the only code
//! that answers a request, and it answers each exactly once (it consumes the request's
//! [`Responder`]).

mod account;
mod command_exec;
mod compact;
mod config;
mod initialize;
mod mcp;
mod model;
mod params;
mod permission_profile;
pub(crate) mod reply;
mod skills;
mod thread;
mod thread_admin;
mod thread_items;
mod thread_object;
mod thread_read;
mod turn;

use std::sync::Arc;

use serde::Serialize;

use crate::protocol::methods::ClientRequest;

use super::context::ServerContext;
use super::errors::{handler_error, HandlerError};
use super::outgoing::Responder;
use reply::{After, Reply};

/// Runs one decoded request and answers it.
pub(crate) async fn handle(context: &Arc<ServerContext>, to: Responder, request: ClientRequest) {
    match request {
        ClientRequest::Initialize(params) => {
            let result = initialize::initialize(context, params);
            // Configuration warnings follow the handshake's response.
            let warnings = config::config_warnings(&context.config.warnings)
                .into_iter()
                .map(After::Notify)
                .collect();
            let reply = match result {
                Ok(response) => Reply::then(response, warnings),
                Err(error) => Reply::plain(Err(error)),
            };
            send(context, to, reply).await
        }
        ClientRequest::ThreadStart(params) => {
            send(context, to, thread::thread_start(context, params).await).await
        }
        ClientRequest::ThreadResume(params) => {
            send(context, to, thread::thread_resume(context, params).await).await
        }
        ClientRequest::ThreadFork(params) => {
            send(context, to, thread::thread_fork(context, params).await).await
        }
        ClientRequest::ThreadList(params) => {
            respond(context, to, thread_read::thread_list(context, params).await).await
        }
        ClientRequest::ThreadRead(params) => {
            respond(context, to, thread_read::thread_read(context, params).await).await
        }
        ClientRequest::ThreadArchive(params) => {
            send(
                context,
                to,
                thread_admin::thread_archive(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadUnarchive(params) => {
            send(
                context,
                to,
                thread_admin::thread_unarchive(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadSetName(params) => {
            send(
                context,
                to,
                thread_admin::thread_set_name(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadLoadedList(params) => {
            respond(
                context,
                to,
                thread_read::thread_loaded_list(context, params),
            )
            .await
        }
        ClientRequest::ThreadUnsubscribe(params) => {
            respond(
                context,
                to,
                thread_admin::thread_unsubscribe(context, params),
            )
            .await
        }
        ClientRequest::TurnStart(params) => {
            send(context, to, turn::turn_start(context, params).await).await
        }
        ClientRequest::TurnSteer(params) => {
            respond(context, to, turn::turn_steer(context, params).await).await
        }
        ClientRequest::TurnInterrupt(params) => {
            respond(context, to, turn::turn_interrupt(context, params)).await
        }
        ClientRequest::ModelList(params) => {
            respond(context, to, model::model_list(context, params).await).await
        }
        ClientRequest::ConfigRead(params) => {
            respond(context, to, config::config_read(context, params)).await
        }
        ClientRequest::CommandExec(params) => {
            // A command may run for minutes: it runs beside later requests, on the handler
            // tracker (which shutdown stops and waits for), and is answered when it is over.
            let task_context = context.clone();
            context.lifecycle.handlers.spawn(async move {
                let result = command_exec::command_exec(&task_context, params).await;
                respond(&task_context, to, result).await;
            });
        }
        ClientRequest::AccountRead(params) => {
            respond(context, to, account::account_read(context, params).await).await
        }
        ClientRequest::AccountLoginStart(params) => {
            send(
                context,
                to,
                account::account_login_start(context, params).await,
            )
            .await
        }
        ClientRequest::AccountLoginCancel(params) => {
            respond(context, to, account::account_login_cancel(params)).await
        }
        ClientRequest::AccountLogout(_) => {
            send(context, to, account::account_logout(context).await).await
        }
        ClientRequest::SkillsList(params) => {
            respond(context, to, skills::skills_list(context, params).await).await
        }
        ClientRequest::SkillsExtraRootsSet(params) => {
            respond(context, to, skills::skills_extra_roots_set(context, params)).await
        }
        ClientRequest::PermissionProfileList(params) => {
            respond(
                context,
                to,
                permission_profile::permission_profile_list(params),
            )
            .await
        }
        ClientRequest::ThreadItemsList(params) => {
            respond(
                context,
                to,
                thread_items::thread_items_list(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadCompactStart(params) => {
            send(context, to, compact::thread_compact_start(context, params)).await
        }
        ClientRequest::McpServerStatusList(params) => {
            respond(
                context,
                to,
                mcp::mcp_server_status_list(context, params).await,
            )
            .await
        }
        ClientRequest::ThreadGoalGet(params) => {
            respond(
                context,
                to,
                permission_profile::thread_goal_get(context, params).await,
            )
            .await
        }
    }
}

/// Answers with a bare result or error.
async fn respond<T: Serialize>(
    context: &Arc<ServerContext>,
    to: Responder,
    result: Result<T, HandlerError>,
) {
    send(context, to, Reply::plain(result)).await
}

/// Sends a reply in the protocol's order: what goes before, the one response, then (after a
/// result only) what follows.
async fn send<T: Serialize>(context: &Arc<ServerContext>, to: Responder, reply: Reply<T>) {
    let Reply {
        before,
        result,
        after,
    } = reply;
    for notification in &before {
        let _ = context.outgoing.send_notification(notification).await;
    }
    match result {
        Ok(value) => {
            let _ = context.outgoing.send_response(to, &value).await;
        }
        Err(error) => {
            tracing::debug!(id = %to.id(), %error, "request failed");
            let _ = context
                .outgoing
                .send_error(to, &handler_error(&error))
                .await;
            return;
        }
    }
    for step in after {
        match step {
            After::Notify(notification) => {
                let _ = context.outgoing.send_notification(&notification).await;
            }
            After::Announce(started) => {
                let (thread, spawn) = *started;
                thread::announce_started(context, thread, spawn).await;
            }
            After::OpenGate(gate) => gate.open(),
            After::StartMcpServers(thread) => thread.start_mcp_servers().await,
        }
    }
}
