//! `thread/compact/start`: starts a compaction turn, answers, then lets the turn run, so the
//! response precedes `turn/started` as for `turn/start`.

use std::sync::Arc;

use crate::core::{CoreError, ThreadId};
use crate::protocol::compact::{ThreadCompactStartParams, ThreadCompactStartResponse};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::reply::{After, Reply};

pub(crate) fn thread_compact_start(
    context: &Arc<ServerContext>,
    params: ThreadCompactStartParams,
) -> Reply<ThreadCompactStartResponse> {
    match ThreadId::parse(&params.thread_id)
        .map_err(CoreError::from)
        .and_then(|thread_id| context.threads.get(&thread_id))
        .and_then(|thread| thread.start_compaction())
    {
        Ok(started) => Reply::then(
            ThreadCompactStartResponse {},
            started.gate.map(After::OpenGate).into_iter().collect(),
        ),
        Err(error) => Reply::plain(Err(HandlerError::from(error))),
    }
}

handler!(ThreadCompactStart, |context, params| thread_compact_start(
    context, params
));
