//! `thread/backgroundTerminals/list`, `/terminate` and `/clean`: a loaded thread's commands
//! still running, for clients that opted into the experimental API (as the reference asks).
//!
//! Cursors are positions in the thread's list of running commands (oldest first), as decimal
//! strings; a command that ends between two pages shifts the later ones by one.

use crate::core::{BackgroundTerminal, ThreadId};
use crate::protocol::background_terminals::{
    ThreadBackgroundTerminal, ThreadBackgroundTerminalsCleanParams,
    ThreadBackgroundTerminalsListParams, ThreadBackgroundTerminalsListResponse,
    ThreadBackgroundTerminalsTerminateParams, ThreadBackgroundTerminalsTerminateResponse,
};
use crate::protocol::methods::{method, Method};
use crate::protocol::turn::EmptyResponse;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

/// The reference's answer to a client without the experimental capability.
fn require_experimental<M: Method>(context: &ServerContext) -> Result<(), HandlerError> {
    if context.connection().experimental_api {
        return Ok(());
    }
    Err(HandlerError::InvalidRequest(format!(
        "{} requires experimentalApi capability",
        M::NAME
    )))
}

async fn list(
    context: &ServerContext,
    params: ThreadBackgroundTerminalsListParams,
) -> Result<ThreadBackgroundTerminalsListResponse, HandlerError> {
    require_experimental::<method::ThreadBackgroundTerminalsList>(context)?;
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    let start = match params.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|error| HandlerError::InvalidRequest(format!("invalid cursor: {error}")))?,
    };
    let all = thread.background_terminals().await;
    let limit = params
        .limit
        .and_then(|limit| usize::try_from(limit).ok())
        .filter(|limit| *limit > 0)
        .unwrap_or(all.len().max(1));
    let end = start.saturating_add(limit).min(all.len());
    let data = all
        .get(start.min(end)..end)
        .unwrap_or_default()
        .iter()
        .map(terminal)
        .collect();
    Ok(ThreadBackgroundTerminalsListResponse {
        data,
        next_cursor: (end < all.len()).then(|| end.to_string()),
    })
}

fn terminal(terminal: &BackgroundTerminal) -> ThreadBackgroundTerminal {
    ThreadBackgroundTerminal {
        item_id: terminal.item_id.clone(),
        process_id: terminal.process_id.clone(),
        command: terminal.command.clone(),
        cwd: terminal.cwd.clone(),
        os_pid: terminal.os_pid,
        cpu_percent: terminal.cpu_percent,
        rss_kb: terminal.rss_kb,
    }
}

async fn terminate(
    context: &ServerContext,
    params: ThreadBackgroundTerminalsTerminateParams,
) -> Result<ThreadBackgroundTerminalsTerminateResponse, HandlerError> {
    require_experimental::<method::ThreadBackgroundTerminalsTerminate>(context)?;
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    Ok(ThreadBackgroundTerminalsTerminateResponse {
        terminated: thread.terminate_background_terminal(&params.process_id),
    })
}

async fn clean(
    context: &ServerContext,
    params: ThreadBackgroundTerminalsCleanParams,
) -> Result<EmptyResponse, HandlerError> {
    require_experimental::<method::ThreadBackgroundTerminalsClean>(context)?;
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    thread.clean_background_terminals();
    Ok(EmptyResponse {})
}

handler!(ThreadBackgroundTerminalsList, |context, params| list(
    context, params
)
.await);
handler!(ThreadBackgroundTerminalsTerminate, |context, params| {
    terminate(context, params).await
});
handler!(ThreadBackgroundTerminalsClean, |context, params| clean(
    context, params
)
.await);
