//! One sampling request: build and send it, feed each event of the response stream to
//! [`super::response`] (which owns everything the events do), then drain the tools the response
//! started, on every way out, so no call is left without its output.
//!
//! Invariants (docs/ARCHITECTURE.md §6): `completed` ends the stream part (see
//! [`super::response`]); after the stream, in-flight tools are awaited in call order and each
//! output recorded (live history, then rollout); only then is token usage emitted and the result
//! returned.

use tokio::sync::mpsc;

use crate::client::{ClientError, ProviderInfo, RequestContext, ResponseStream, RetryNotice};
use crate::wire::event::RateLimitSnapshot;
use crate::wire::{ResponseEvent, StreamError, TokenUsage};

use super::super::event::EventMsg;
use super::super::tools;
use super::request::build_request;
use super::response::{self, ResponseState, SamplingResult};
use super::turn_context::TurnContext;
use super::turn_error::client_turn_error;
use super::usage::emit_usage;

#[derive(Debug)]
pub(crate) enum SamplingError {
    Interrupted,
    Client(ClientError),
    Stream(StreamError),
    /// The stream failed after the provider answered: the response's rate-limit headers, and
    /// the usage the failed response reported, are kept so the turn can still report and count
    /// them (see [`super::usage::emit_failed_usage`]).
    StreamAfterHeaders {
        error: StreamError,
        rate_limits: Option<RateLimitSnapshot>,
        usage: Option<TokenUsage>,
    },
}

impl SamplingError {
    /// The stream error, whichever variant carries it.
    pub(crate) fn stream_error(&self) -> Option<&StreamError> {
        match self {
            SamplingError::Stream(error) | SamplingError::StreamAfterHeaders { error, .. } => {
                Some(error)
            }
            _ => None,
        }
    }
}

/// How the stream part of a response ended.
struct Completed {
    token_usage: Option<TokenUsage>,
}

pub(super) async fn sample_once(turn: &TurnContext) -> Result<SamplingResult, SamplingError> {
    let settings = turn.request_settings();
    let mut tool_specs = tools::tool_specs(&settings);
    if let Some(servers) = turn.thread.mcp_servers() {
        // Servers still starting get a bounded wait, so the first request can offer their tools.
        servers.wait_started(&turn.cancel).await;
        let deferred = tools::tool_search::defers_mcp_tools(&settings);
        tool_specs.extend(tools::mcp::specs(servers, deferred));
    }
    let request = build_request(
        &settings,
        turn.thread.history(),
        turn.thread.id.as_str(),
        tool_specs,
        turn.output_schema.as_ref(),
        turn.skills_instructions.as_deref(),
    );
    let request = crate::wire::ResponsesRequest {
        service_tier: turn.service_tier.clone().or(settings.service_tier.clone()),
        ..request
    };
    let context = RequestContext {
        thread_id: turn.thread.id.to_string(),
        originator: settings.originator.clone(),
        turn_state: turn.provider_turn_state.clone(),
    };
    let provider = settings.provider.clone();
    let stream = open_stream(turn, &provider, &request, &context).await?;
    // The request (tool specs, a copy of the history) is sent: free it before the stream runs.
    drop((request, context, provider));
    let mut state = ResponseState::new(turn, settings);
    let outcome = consume_stream(turn, &mut state, stream).await;
    response::on_stream_end(turn, &mut state).await;
    state.drain_tools(turn).await;
    let completed = match outcome {
        Ok(completed) => completed,
        Err(SamplingError::Stream(error)) => {
            let (rate_limits, usage) = state.take_failure_report();
            return Err(SamplingError::StreamAfterHeaders {
                error,
                rate_limits,
                usage,
            });
        }
        Err(other) => return Err(other),
    };
    let window = Some(state.settings().context_window());
    emit_usage(
        turn,
        completed.token_usage,
        state.rate_limits().cloned(),
        window,
    )
    .await;
    Ok(state.into_result())
}

/// Retry notices waiting to be told; more than a few at once cannot happen (each retry first
/// waits out its backoff), and a lost one only loses a line of progress.
const RETRY_NOTICES: usize = 4;

/// Opens the response stream. Each retry the client makes before the stream exists is told to
/// the client as an `error` that will be retried, as a broken stream's is, so a provider that is
/// down or busy never looks like a hang.
async fn open_stream(
    turn: &TurnContext,
    provider: &ProviderInfo,
    request: &crate::wire::ResponsesRequest,
    context: &RequestContext,
) -> Result<ResponseStream, SamplingError> {
    let (retries_tx, mut retries_rx) = mpsc::channel(RETRY_NOTICES);
    let opening =
        turn.thread
            .client
            .stream_reporting_retries(provider, request, context, Some(&retries_tx));
    tokio::pin!(opening);
    loop {
        tokio::select! {
            biased;
            _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
            Some(notice) = retries_rx.recv() => announce_request_retry(turn, notice).await,
            stream = &mut opening => {
                turn.thread.provider_contact.note_attempt(&stream);
                return stream.map_err(SamplingError::Client);
            }
        }
    }
}

async fn announce_request_retry(turn: &TurnContext, notice: RetryNotice) {
    let mut error = client_turn_error(&notice.error);
    error.details = Some(std::mem::take(&mut error.message));
    error.message = format!(
        "Retrying the request ({}/{}) in {:.1}s",
        notice.attempt,
        notice.max_retries,
        notice.delay.as_secs_f64()
    );
    turn.emit(EventMsg::Error {
        turn_id: turn.turn_id.clone(),
        error,
        will_retry: true,
    })
    .await;
}

/// Reads events until `completed`, an error or an interrupt. The stream is dropped on return,
/// which closes the connection.
async fn consume_stream(
    turn: &TurnContext,
    state: &mut ResponseState,
    mut stream: ResponseStream,
) -> Result<Completed, SamplingError> {
    loop {
        let event = tokio::select! {
            biased;
            _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
            event = stream.next() => event,
        };
        let event = match event {
            None => return Err(SamplingError::Stream(StreamError::ClosedBeforeCompleted)),
            Some(Err(error)) => return Err(SamplingError::Stream(error)),
            Some(Ok(event)) => event,
        };
        if let ResponseEvent::Completed {
            token_usage,
            end_turn,
            ..
        } = event
        {
            response::on_completed(turn, state, end_turn).await;
            return Ok(Completed { token_usage });
        }
        response::on_event(turn, state, event).await;
    }
}
