//! `command/exec/write`, `/resize` and `/terminate`: a client talks to one of its running
//! `command/exec` commands by the `processId` it gave it (`server/exec_processes.rs`).

use base64::Engine;

use crate::protocol::command::{
    CommandExecResizeParams, CommandExecTerminateParams, CommandExecWriteParams,
};
use crate::protocol::turn::EmptyResponse;
use crate::supervisor::TerminalSize;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::exec_processes::ExecControl;

fn running(context: &ServerContext, process_id: &str) -> Result<ExecControl, HandlerError> {
    context.exec_processes.get(process_id).ok_or_else(|| {
        HandlerError::InvalidRequest(format!(
            "no active command/exec for process id {process_id:?}"
        ))
    })
}

async fn write(
    context: &ServerContext,
    params: CommandExecWriteParams,
) -> Result<EmptyResponse, HandlerError> {
    let control = running(context, &params.process_id)?;
    let bytes = match &params.delta_base64 {
        Some(delta) => base64::engine::general_purpose::STANDARD
            .decode(delta)
            .map_err(|error| {
                HandlerError::InvalidParams(format!("invalid deltaBase64: {error}"))
            })?,
        None => Vec::new(),
    };
    let mut stdin = control.stdin.lock().await;
    if !bytes.is_empty() {
        let Some(input) = stdin.as_mut() else {
            return Err(HandlerError::InvalidRequest(format!(
                "stdin is not open for command/exec process id {:?}; start it with \
                 `streamStdin` or `tty`",
                params.process_id
            )));
        };
        input
            .write(bytes)
            .await
            .map_err(|error| HandlerError::InvalidRequest(format!("writing stdin: {error}")))?;
    }
    if params.close_stdin {
        // Dropped: a pipe closes; a PTY gets end-of-file (its line discipline's EOF).
        stdin.take();
    }
    Ok(EmptyResponse {})
}

async fn resize(
    context: &ServerContext,
    params: CommandExecResizeParams,
) -> Result<EmptyResponse, HandlerError> {
    let control = running(context, &params.process_id)?;
    let Some(pty) = control.pty else {
        return Err(HandlerError::InvalidRequest(format!(
            "command/exec process id {:?} has no tty to resize",
            params.process_id
        )));
    };
    let size = TerminalSize {
        rows: params.size.rows,
        cols: params.size.cols,
    };
    tokio::task::spawn_blocking(move || pty.resize(size))
        .await
        .map_err(|error| HandlerError::Internal(error.to_string()))?
        .map_err(|error| HandlerError::Internal(format!("resizing the tty: {error}")))?;
    Ok(EmptyResponse {})
}

async fn terminate(
    context: &ServerContext,
    params: CommandExecTerminateParams,
) -> Result<EmptyResponse, HandlerError> {
    running(context, &params.process_id)?.kill.cancel();
    Ok(EmptyResponse {})
}

handler!(CommandExecWrite, |context, params| write(context, params)
    .await);
handler!(CommandExecResize, |context, params| resize(context, params)
    .await);
handler!(CommandExecTerminate, |context, params| terminate(
    context, params
)
.await);
