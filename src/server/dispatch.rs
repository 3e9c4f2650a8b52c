//! Reading requests: each input line is parsed once, classified, and routed. Requests go through
//! a bounded ingress queue to one dispatcher task; when the queue is full the request is refused
//! with -32001 at once. Replies to our own server requests bypass the queue so a waiting turn is
//! never stuck behind other work. The queue's capacity is `ingress_queue_capacity` (default 256).
//!
//! Each method's row in the table (`protocol::methods`) says how it runs. Requests whose order
//! matters (the handshake, thread lifecycle, turns, archive, naming) run one at a time in arrival
//! order. Read-only requests that may be slow (`thread/read` of a huge rollout, `thread/list`)
//! run beside them on the connection's handler tracker, at most [`MAX_CONCURRENT_READS`] at once,
//! so they never hold up a `turn/interrupt` sent after them. Background ones (`command/exec`) run
//! on their own task and are answered when done.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncBufRead;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::protocol::jsonrpc::{
    ErrorObject, Incoming, IncomingMessage, RequestId, INVALID_REQUEST, PARSE_ERROR,
};
use crate::protocol::methods::{ClientRequest, Concurrency};

use super::context::ServerContext;
use super::errors::{already_initialized, decode_error, not_initialized, overloaded};
use super::handlers;
use super::outgoing::Responder;
use super::shutdown::ClientEnds;
use super::stdio::{InputLine, LineReader};

/// How many read-only requests may run beside the ordered ones; beyond that the dispatcher waits
/// for one to finish (bounded work, and the queue's -32001 still applies behind it).
pub(crate) const MAX_CONCURRENT_READS: usize = 8;

pub(crate) type IngressSender = mpsc::Sender<(RequestId, Queued)>;

/// One request as it waits in the ingress queue. Requests that failed to decode queue too, so
/// their errors keep arrival order and the handshake applies to them like to any request.
#[derive(Debug)]
pub(crate) enum Queued {
    /// Boxed: decoded params can be large, the undecodable case is small.
    Request(Box<ClientRequest>),
    Undecodable {
        /// The method as sent, so a malformed `initialize` is told apart from other methods.
        method: String,
        error: ErrorObject,
    },
}

/// Why the read loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StopReason {
    StdinEof,
    StdinError(String),
    Signal(&'static str),
    OutputClosed,
}

/// How long a line that waits for room in the outgoing queue may keep waiting once the client
/// closed stdin: long enough for a client that reads its last replies slowly, short enough to
/// stay well inside the shutdown budget for one that reads nothing.
const STALLED_AFTER_INPUT_CLOSED: Duration = Duration::from_millis(100);

/// Reads lines until EOF, a termination signal, or the client going away.
///
/// Lines are routed one at a time, in arrival order. Routing a line may wait: the error reply to
/// a malformed line goes to the outgoing queue, which a client that stopped reading stdout keeps
/// full. That wait must not hide a signal, a closed stdout or a closed stdin, so it is raced
/// against them. A routing cut short this way goes on beside the shutdown until it gives up on
/// the client's output, so its reply still goes out if the client reads again in time.
pub(crate) async fn read_loop<R: AsyncBufRead + Unpin>(
    context: &Arc<ServerContext>,
    mut reader: LineReader<R>,
    ingress_tx: IngressSender,
    ends: ClientEnds,
) -> StopReason {
    let mut terminate = super::shutdown::TerminationSignals::new();
    loop {
        let line = tokio::select! {
            line = reader.next_line() => line,
            signal = terminate.recv() => return StopReason::Signal(signal),
            _ = ends.output_closed.cancelled() => return StopReason::OutputClosed,
        };
        let line = match line {
            Ok(InputLine::Eof) => return StopReason::StdinEof,
            Err(error) => return StopReason::StdinError(error.to_string()),
            Ok(line) => line,
        };
        // Boxed so that, cut short, it can move to a task of its own.
        let mut routing = Box::pin(route_input(context.clone(), line, ingress_tx.clone()));
        let reason = tokio::select! {
            biased;
            _ = &mut routing => continue,
            signal = terminate.recv() => StopReason::Signal(signal),
            _ = ends.output_closed.cancelled() => StopReason::OutputClosed,
            _ = input_closed_while_stalled(&ends.input_hung_up) => StopReason::StdinEof,
        };
        finish_beside_shutdown(context, routing);
        return reason;
    }
}

/// Resolves a short while after the client closed stdin: a line that still waits for room then
/// belongs to a client that neither writes nor reads any more.
async fn input_closed_while_stalled(input_hung_up: &CancellationToken) {
    input_hung_up.cancelled().await;
    tokio::time::sleep(STALLED_AFTER_INPUT_CLOSED).await;
}

/// Lets a routing that waits for room in the outgoing queue finish during shutdown, until
/// shutdown abandons the client's output. It runs on the handler tracker, which shutdown waits
/// for; until it ends, its copy of the ingress sender keeps the dispatcher draining.
fn finish_beside_shutdown(
    context: &Arc<ServerContext>,
    routing: std::pin::Pin<Box<impl Future<Output = ()> + Send + 'static>>,
) {
    let abandoned = context.lifecycle.output_abandoned.clone();
    context.lifecycle.handlers.spawn(async move {
        tokio::select! {
            _ = routing => {}
            _ = abandoned.cancelled() => {}
        }
    });
}

pub(crate) async fn route_input(
    context: Arc<ServerContext>,
    line: InputLine,
    ingress_tx: IngressSender,
) {
    match line {
        InputLine::Line(bytes) => route_line(&context, &bytes, &ingress_tx).await,
        InputLine::TooLong { length } => {
            let limit = context.config.max_line_bytes;
            let error = ErrorObject::new(
                INVALID_REQUEST,
                format!("message too large: {length} bytes (limit {limit})"),
            )
            .with_data(json!({ "reason": "line_too_long", "limit": limit }));
            let _ = context.outgoing.send_error_without_id(&error).await;
        }
        InputLine::Eof => {}
    }
}

async fn route_line(context: &Arc<ServerContext>, bytes: &[u8], ingress_tx: &IngressSender) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let message = format!("Parse error: input is not valid UTF-8 ({error})");
            return send_parse_error(context, message).await;
        }
    };
    let message: IncomingMessage<'_> = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(error) if error.is_syntax() || error.is_eof() => {
            return send_parse_error(context, format!("Parse error: {error}")).await;
        }
        Err(error) => {
            let error = ErrorObject::new(
                INVALID_REQUEST,
                format!("Invalid request: not a JSON-RPC message object ({error})"),
            );
            let _ = context.outgoing.send_error_without_id(&error).await;
            return;
        }
    };
    match message.classify() {
        Incoming::Request { id, method, params } => {
            let request = match ClientRequest::decode(&method, params) {
                Ok(request) => Queued::Request(Box::new(request)),
                Err(error) => Queued::Undecodable {
                    method,
                    error: decode_error(&error),
                },
            };
            if let Err(mpsc::error::TrySendError::Full((id, _))) =
                ingress_tx.try_send((id, request))
            {
                let _ = context
                    .outgoing
                    .send_error(Responder::new(id), &overloaded())
                    .await;
            }
        }
        Incoming::Notification { method } => {
            tracing::debug!(%method, "client notification");
        }
        Incoming::Response { id, result } => {
            if !context
                .server_requests
                .resolve(context.id, &id, result)
                .await
            {
                tracing::debug!(%id, "response to no pending server request; ignored");
            }
        }
        Incoming::Invalid { id, reason } => {
            let error = ErrorObject::new(INVALID_REQUEST, format!("Invalid request: {reason}"));
            let _ = match id {
                Some(id) => {
                    context
                        .outgoing
                        .send_error(Responder::new(id), &error)
                        .await
                }
                None => context.outgoing.send_error_without_id(&error).await,
            };
        }
    }
}

async fn send_parse_error(context: &ServerContext, message: String) {
    tracing::debug!(%message, "unparsable input line");
    let _ = context
        .outgoing
        .send_error_without_id(&ErrorObject::new(PARSE_ERROR, message))
        .await;
}

/// Runs queued requests, enforcing the handshake: ordered ones one at a time in arrival order,
/// read-only ones concurrently (see the module docs). Each gets exactly one response.
pub(crate) async fn run_dispatcher(
    context: Arc<ServerContext>,
    mut ingress_rx: mpsc::Receiver<(RequestId, Queued)>,
) {
    let reads = Arc::new(Semaphore::new(MAX_CONCURRENT_READS));
    while let Some((id, queued)) = ingress_rx.recv().await {
        let responder = Responder::new(id);
        let initialized = context.connection().initialized;
        let (is_initialize, request) = match queued {
            Queued::Request(request) => (
                matches!(*request, ClientRequest::Initialize(_)),
                Ok(*request),
            ),
            Queued::Undecodable { method, error } => (method == "initialize", Err(error)),
        };
        let refusal = match (is_initialize, initialized) {
            (true, true) => Some(already_initialized()),
            (false, false) => Some(not_initialized()),
            _ => None,
        };
        let request = match (refusal, request) {
            (Some(error), _) | (None, Err(error)) => {
                let _ = context.outgoing.send_error(responder, &error).await;
                continue;
            }
            (None, Ok(request)) => request,
        };
        match request.concurrency() {
            Concurrency::Ordered => handlers::handle(&context, responder, request).await,
            Concurrency::Concurrent => {
                // The semaphore is never closed; should that change, run the request inline.
                let Ok(permit) = reads.clone().acquire_owned().await else {
                    handlers::handle(&context, responder, request).await;
                    continue;
                };
                let context = context.clone();
                context.clone().lifecycle.handlers.spawn(async move {
                    handlers::handle(&context, responder, request).await;
                    drop(permit);
                });
            }
            // It may run for minutes: it runs beside later requests, on the handler tracker
            // (which shutdown stops and waits for), and is answered when it is over.
            Concurrency::Background => {
                let context = context.clone();
                context.clone().lifecycle.handlers.spawn(async move {
                    handlers::handle(&context, responder, request).await;
                });
            }
        }
    }
}
