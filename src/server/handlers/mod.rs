//! Request handlers, one file per resource. Each returns its typed result or a `HandlerError`,
//! as a [`reply::Reply`] when notifications go before or after it; [`handle`] is the only code
//! that answers a request, and it answers each exactly once (it consumes the request's
//! [`Responder`]).

/// Registers a function as the handler of one method of the table
/// ([`crate::protocol::methods`]): `handler!(ThreadRead, |context, params| thread_read(context,
/// params).await);`. The body may give a [`Reply`] or a bare `Result`.
macro_rules! handler {
    ($method:ident, |$context:ident, $params:ident| $body:expr) => {
        impl $crate::server::handlers::Handle for $crate::protocol::methods::method::$method {
            async fn handle(
                $context: &std::sync::Arc<$crate::server::context::ServerContext>,
                $params: <Self as $crate::protocol::methods::Method>::Params,
            ) -> $crate::server::handlers::reply::Reply<
                <Self as $crate::protocol::methods::Method>::Response,
            > {
                ($body).into()
            }
        }
    };
}

mod account;
mod background_terminals;
mod collaboration_mode;
mod command_exec;
mod command_exec_control;
mod compact;
mod config;
mod config_write;
mod exec_run;
mod features;
mod file_search;
mod fs;
mod goal;
mod initialize;
mod injected_items;
mod mcp;
mod mcp_calls;
mod mcp_oauth;
mod model;
mod model_provider;
mod model_provider_write;
mod params;
mod permission_profile;
mod process;
mod rate_limits;
pub(crate) mod reply;
mod review;
mod skills;
mod thread;
mod thread_admin;
mod thread_delete;
mod thread_history;
mod thread_items;
mod thread_metadata;
pub(crate) mod thread_object;
mod thread_read;
mod thread_search;
mod thread_settings;
mod thread_turns;
mod turn;

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;

use crate::protocol::methods::{client_request_table, method, ClientRequest, Method};

use super::context::ServerContext;
use super::errors::handler_error;
use super::outgoing::Responder;
use reply::{After, Reply};

/// The handler of one method: every row of the table has exactly one (the dispatch below does
/// not compile otherwise), registered with [`handler!`] next to the function that does the work.
pub(crate) trait Handle: Method {
    fn handle(
        context: &Arc<ServerContext>,
        params: Self::Params,
    ) -> impl Future<Output = Reply<Self::Response>> + Send;
}

macro_rules! define_dispatch {
    ($($variant:ident => $method:literal, $params:ty, $response:ty, $mode:ident;)*) => {
        /// Runs one decoded request and answers it.
        pub(crate) async fn handle(
            context: &Arc<ServerContext>,
            to: Responder,
            request: ClientRequest,
        ) {
            match request {
                $(ClientRequest::$variant(params) => {
                    answer::<method::$variant>(context, to, params).await
                })*
            }
        }
    };
}

client_request_table!(define_dispatch);

async fn answer<M: Handle>(context: &Arc<ServerContext>, to: Responder, params: M::Params) {
    send(context, to, M::handle(context, params).await).await
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
