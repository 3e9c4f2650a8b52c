//! One sampling request: send the history, consume the response stream, commit complete items,
//! then drain the tools the response started — on every way out, so no call is left without
//! its output.
//!
//! Invariants (docs/ARCHITECTURE.md §6): at most one active item (see [`super::active_item`]);
//! `completed` is the only success barrier — it flushes the parser of an item that never got
//! `done`, and sets follow-up when `end_turn == false`; after the stream, in-flight tools are
//! awaited in call order and each output recorded (live history, then rollout); only then is
//! token usage emitted and the result returned. Nothing after `completed` belongs to the response.

use crate::core::tools::apply_patch;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use tokio::task::JoinHandle;

use crate::client::{ClientError, RequestContext, ResponseStream};
use crate::rollout::RolloutItem;
use crate::wire::event::RateLimitSnapshot;
use crate::wire::{ResponseEvent, StreamError, TokenUsage};

use super::super::event::EventMsg;
use super::super::items::TurnItem;
use super::super::settings::{ReasoningSummaryMode, ThreadSettings};
use super::super::tools::{self, ToolOutput};
use super::active_item::{ActiveItemSlot, ToolInputStream};
use super::item_events::{self, PlanItemState};
use super::request::build_request;
use super::turn_context::TurnContext;

#[derive(Debug)]
pub(crate) enum SamplingError {
    Interrupted,
    Client(ClientError),
    Stream(StreamError),
    /// The stream failed after the provider answered: the response's rate-limit headers, and
    /// the usage the failed response reported, are kept so the turn can still report and count
    /// them (see [`emit_failed_usage`]).
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

/// What one successful response means for the turn.
pub(crate) struct SamplingResult {
    pub needs_follow_up: bool,
    pub final_items: Vec<TurnItem>,
}

/// A tool started by this response, awaited in call order after the stream.
pub(crate) enum InFlightTool {
    Running {
        call_id: String,
        handle: JoinHandle<Option<ToolOutput>>,
    },
    /// A call that could not run, answered at once.
    Ready(ToolOutput),
}

/// The state of one response while it streams.
pub(crate) struct ResponseState {
    pub settings: ThreadSettings,
    pub active: ActiveItemSlot,
    pub tool_input: Option<ToolInputStream>,
    pub plan_mode: bool,
    pub plan: Option<PlanItemState>,
    pub show_raw_reasoning: bool,
    pub sequential_cutoff: bool,
    pub in_flight: VecDeque<InFlightTool>,
    pub needs_follow_up: bool,
    pub final_items: Vec<TurnItem>,
    rate_limits: Option<RateLimitSnapshot>,
    /// What a failed response reported it used (counted only when the stream then fails).
    failed_usage: Option<TokenUsage>,
}

impl ResponseState {
    fn new(turn: &TurnContext, settings: ThreadSettings) -> ResponseState {
        ResponseState {
            plan_mode: settings.plan_mode,
            plan: settings.plan_mode.then(|| PlanItemState {
                id: format!("{}-plan", turn.turn_id),
                started: false,
                completed: false,
            }),
            show_raw_reasoning: settings.show_raw_agent_reasoning,
            sequential_cutoff: settings.reasoning_summary_mode
                == ReasoningSummaryMode::SequentialCutoff,
            settings,
            active: ActiveItemSlot::default(),
            tool_input: None,
            in_flight: VecDeque::new(),
            needs_follow_up: false,
            final_items: Vec::new(),
            rate_limits: None,
            failed_usage: None,
        }
    }
}

/// How the stream part of a response ended.
struct Completed {
    token_usage: Option<TokenUsage>,
}

pub(super) async fn sample_once(turn: &TurnContext) -> Result<SamplingResult, SamplingError> {
    let settings = turn.thread.settings();
    let mut tool_specs = tools::tool_specs(&settings);
    if let Some(servers) = turn.thread.mcp_servers() {
        // Servers still starting get a bounded wait, so the first request can offer their tools.
        servers.wait_started(&turn.cancel).await;
        tool_specs.extend(tools::mcp::specs(servers));
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
    let stream = tokio::select! {
        _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
        stream = turn.thread.client.stream(&provider, &request, &context) => {
            stream.map_err(SamplingError::Client)?
        }
    };
    // The request (tool specs, a copy of the history) is sent: free it before the stream runs.
    drop((request, context, provider));
    let mut state = ResponseState::new(turn, settings);
    let outcome = consume_stream(turn, &mut state, stream).await;
    drain_in_flight(turn, &mut state).await;
    let completed = match outcome {
        Ok(completed) => completed,
        Err(SamplingError::Stream(error)) => {
            return Err(SamplingError::StreamAfterHeaders {
                error,
                rate_limits: state.rate_limits.take(),
                usage: state.failed_usage.take(),
            })
        }
        Err(other) => return Err(other),
    };
    if let Some(usage) = completed.token_usage {
        // What the provider counted is the best measure of the context; compaction adds an
        // estimate of what the history gained since.
        let mut thread_state = turn.thread.state();
        thread_state.context_baseline = Some((usage.total_tokens, thread_state.history.len()));
    }
    let window = Some(state.settings.context_window());
    emit_usage(
        turn,
        completed.token_usage,
        state.rate_limits.clone(),
        window,
    )
    .await;
    Ok(SamplingResult {
        needs_follow_up: state.needs_follow_up,
        final_items: state.final_items,
    })
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
            on_completed(turn, state, end_turn).await;
            return Ok(Completed { token_usage });
        }
        on_event(turn, state, event).await;
    }
}

/// `completed`: the parser of an item that never got `done` is finished here (its item stays
/// uncommitted), and `end_turn == false` asks for another sampling step.
async fn on_completed(turn: &TurnContext, state: &mut ResponseState, end_turn: Option<bool>) {
    if let Some(mut active) = state.active.take() {
        item_events::flush_active_text(turn, &mut active, &mut state.plan).await;
    }
    if end_turn == Some(false) {
        state.needs_follow_up = true;
    }
}

async fn on_event(turn: &TurnContext, state: &mut ResponseState, event: ResponseEvent) {
    match event {
        ResponseEvent::OutputItemAdded(item) => item_events::on_item_added(turn, state, item).await,
        ResponseEvent::OutputItemDone(item) => item_events::on_item_done(turn, state, item).await,
        ResponseEvent::OutputTextDelta { item_id, delta } => {
            item_events::on_text_delta(turn, state, &item_id, delta).await
        }
        ResponseEvent::ReasoningSummaryDelta {
            delta,
            summary_index,
            ..
        } => on_summary_delta(turn, state, delta, summary_index).await,
        ResponseEvent::ReasoningSummaryPartAdded { summary_index, .. } => {
            on_summary_part(turn, state, summary_index).await
        }
        ResponseEvent::ReasoningSummaryDone {
            item_id,
            text,
            summary_index,
        } => on_summary_done(turn, state, item_id, text, summary_index).await,
        ResponseEvent::ReasoningContentDelta {
            delta,
            content_index,
            ..
        } => on_raw_reasoning(turn, state, delta, content_index).await,
        ResponseEvent::CustomToolCallInputDelta { call_id, delta, .. } => {
            if let Some(input) = state.tool_input.as_mut() {
                if input.consume(call_id.as_deref(), &delta) {
                    if let Some(patch) = &input.patch {
                        turn.emit(EventMsg::PatchUpdated {
                            turn_id: turn.turn_id.clone(),
                            item_id: input.call_id.clone(),
                            changes: apply_patch::tool::streamed_entries(patch.snapshot()),
                        })
                        .await;
                    }
                }
            }
        }
        ResponseEvent::ServerModel(model)
            if model != state.settings.model
                && !turn.rerouted_announced.swap(true, Ordering::Relaxed) =>
        {
            turn.emit(EventMsg::ModelRerouted {
                turn_id: turn.turn_id.clone(),
                from_model: state.settings.model.clone(),
                to_model: model,
            })
            .await;
        }
        ResponseEvent::RateLimits(snapshot) => state.rate_limits = Some(snapshot),
        ResponseEvent::FailedUsage(usage) => state.failed_usage = Some(usage),
        // Function-call arguments have no streaming consumer: the call runs once it is done.
        ResponseEvent::FunctionCallArgumentsDelta { .. }
        | ResponseEvent::Created { .. }
        | ResponseEvent::ServerModel(_)
        | ResponseEvent::ModelsEtag(_)
        | ResponseEvent::Completed { .. } => {}
    }
}

async fn on_summary_delta(
    turn: &TurnContext,
    state: &mut ResponseState,
    delta: String,
    summary_index: i64,
) {
    if state.sequential_cutoff {
        return;
    }
    match state
        .active
        .reasoning_for_delta("reasoning_summary_text.delta")
    {
        Ok(active) => {
            let item_id = active.id.clone();
            turn.emit(EventMsg::ReasoningSummaryDelta {
                turn_id: turn.turn_id.clone(),
                item_id,
                delta,
                summary_index,
            })
            .await;
        }
        Err(error) => item_events::warn_protocol_error(turn, &error).await,
    }
}

async fn on_summary_part(turn: &TurnContext, state: &mut ResponseState, summary_index: i64) {
    if state.sequential_cutoff {
        return;
    }
    match state
        .active
        .reasoning_for_delta("reasoning_summary_part.added")
    {
        Ok(active) => {
            let item_id = active.id.clone();
            turn.emit(EventMsg::ReasoningSummaryPartAdded {
                turn_id: turn.turn_id.clone(),
                item_id,
                summary_index,
            })
            .await;
        }
        Err(error) => item_events::warn_protocol_error(turn, &error).await,
    }
}

/// Sequential-cutoff mode only: a finished summary part, shown whole — for the active reasoning
/// item only. A late part of an earlier item is stale and dropped, never attached to whatever
/// is active now.
async fn on_summary_done(
    turn: &TurnContext,
    state: &mut ResponseState,
    item_id: String,
    text: String,
    summary_index: i64,
) {
    if !state.sequential_cutoff {
        return;
    }
    let Some(active) = state
        .active
        .reasoning_for_delta("reasoning_summary_text.done")
        .ok()
    else {
        tracing::debug!(%item_id, "summary for an item that is no longer active dropped");
        return;
    };
    let refers_to_active = active.provider_id.as_deref().unwrap_or(&active.id) == item_id;
    if !refers_to_active {
        tracing::debug!(%item_id, active = %active.id, "stale reasoning summary dropped");
        return;
    }
    let item_id = active.id.clone();
    if summary_index > 0 {
        turn.emit(EventMsg::ReasoningSummaryPartAdded {
            turn_id: turn.turn_id.clone(),
            item_id: item_id.clone(),
            summary_index,
        })
        .await;
    }
    turn.emit(EventMsg::ReasoningSummaryDelta {
        turn_id: turn.turn_id.clone(),
        item_id,
        delta: text,
        summary_index,
    })
    .await;
}

async fn on_raw_reasoning(
    turn: &TurnContext,
    state: &mut ResponseState,
    delta: String,
    content_index: i64,
) {
    let show = state.show_raw_reasoning;
    match state.active.reasoning_for_delta("reasoning_text.delta") {
        Ok(active) if show => {
            let item_id = active.id.clone();
            turn.emit(EventMsg::ReasoningRawDelta {
                turn_id: turn.turn_id.clone(),
                item_id,
                delta,
                content_index,
            })
            .await;
        }
        Ok(_) => {}
        Err(error) => item_events::warn_protocol_error(turn, &error).await,
    }
}

/// Awaits the response's tools in call order and records each output. A tool that produced
/// none (the turn was interrupted, or it crashed) still gets an output, so the history never
/// holds a call without one and the next turn can be sampled.
async fn drain_in_flight(turn: &TurnContext, state: &mut ResponseState) {
    while let Some(tool) = state.in_flight.pop_front() {
        let output = match tool {
            InFlightTool::Ready(output) => output,
            InFlightTool::Running { call_id, handle } => match handle.await {
                Ok(Some(output)) => output,
                Ok(None) => {
                    item_events::aborted_output(call_id, "aborted: the turn was interrupted")
                }
                Err(error) => {
                    tracing::error!(%error, %call_id, "tool task failed");
                    item_events::aborted_output(call_id, "the tool failed unexpectedly")
                }
            },
        };
        turn.record_history(output.into_item()).await;
    }
}

/// A response that failed still reports usage and rate limits, as the reference does when the
/// failure ends the turn. The usage the failed response itself reported (if any) is added to the
/// thread's total: the provider consumed, and bills, those tokens whether or not the response
/// completed.
pub(crate) async fn emit_failed_usage(
    turn: &TurnContext,
    rate_limits: Option<RateLimitSnapshot>,
    usage: Option<TokenUsage>,
) {
    let window = Some(turn.thread.settings().context_window());
    emit_usage(turn, usage, rate_limits, window).await;
}

pub(super) async fn emit_usage(
    turn: &TurnContext,
    usage: Option<TokenUsage>,
    rate_limits: Option<RateLimitSnapshot>,
    model_context_window: Option<i64>,
) {
    let last = usage.unwrap_or_default();
    let total = {
        let mut thread_state = turn.thread.state();
        let total = &mut thread_state.total_usage;
        total.input_tokens += last.input_tokens;
        total.cached_input_tokens += last.cached_input_tokens;
        total.output_tokens += last.output_tokens;
        total.reasoning_output_tokens += last.reasoning_output_tokens;
        total.total_tokens += last.total_tokens;
        *total
    };
    // Persisted so a resumed thread reports its usage and keeps counting from its total.
    turn.persist(RolloutItem::TokenUsage {
        turn_id: turn.turn_id.clone(),
        total,
        last,
        model_context_window,
    })
    .await;
    turn.emit(EventMsg::TokenCount {
        turn_id: turn.turn_id.clone(),
        total,
        last,
        model_context_window,
    })
    .await;
    turn.emit(EventMsg::RateLimits {
        turn_id: turn.turn_id.clone(),
        snapshot: rate_limits,
    })
    .await;
}
