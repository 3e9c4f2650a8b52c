//! `thread/compact/start`: starts a compaction turn, answers, then lets the turn run, so the
//! response precedes `turn/started` as for `turn/start`.

use std::sync::Arc;

use crate::protocol::compact::{ThreadCompactStartParams, ThreadCompactStartResponse};
use crate::protocol::jsonrpc::RequestId;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::respond_error;

pub async fn thread_compact_start(
    context: &Arc<ServerContext>,
    id: &RequestId,
    params: ThreadCompactStartParams,
) {
    let started = context
        .threads
        .get(&params.thread_id)
        .and_then(|thread| thread.start_compaction())
        .map_err(HandlerError::from);
    match started {
        Ok(started) => {
            let _ = context
                .outgoing
                .send_response(id, &ThreadCompactStartResponse {})
                .await;
            if let Some(gate) = started.gate {
                gate.open();
            }
        }
        Err(error) => respond_error(context, id, &error).await,
    }
}
