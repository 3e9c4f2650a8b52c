//! Compaction inside a turn: when it runs (before a request, on the count the provider reported;
//! after the provider refused a request as too long), the summarization request to the thread's
//! own provider, then the history swapped for the compacted one and the swap recorded.
//!
//! Invariants:
//! - Decided on what the provider counted: before a request, the `total_tokens` the provider
//!   reported for the thread's last request plus an estimate of the items added after the
//!   model's last output. Nothing is reported before a thread's first response or after a
//!   compaction, so neither compacts; at most one compaction runs between two responses.
//! - Never the reason a turn fails: an automatic compaction that fails leaves the history as it
//!   was and the turn sends its request anyway (the provider decides whether it fits). Only a
//!   provider's refusal that compaction cannot answer (it just ran, it failed, or the turn's
//!   bound is reached) fails the turn, as `contextWindowExceeded`.
//! - Atomic: the summary is requested from a snapshot of the history; the live history is
//!   replaced only once the summary exists, and the rollout records the replacement as one
//!   `compacted` line. An interrupted or failed compaction leaves history and rollout as they
//!   were. (While it runs, nothing else writes the history: the turn running it is the thread's
//!   only writer, and its tools are drained.)
//! - Visible: each compaction is a `contextCompaction` item of the turn that ran it, stored with
//!   the turn so `thread/read` shows it, and always completed: `failed` with the reason when it
//!   did not replace the history.

use crate::client::retry::backoff;
use crate::client::{ClientError, RequestContext};
use crate::rollout::RolloutItem;
use crate::wire::item::ContentItem;
use crate::wire::{
    ApiError, ResponseEvent, ResponseItem, ResponsesRequest, StreamError, TokenUsage,
};

use super::super::compact::{self, prompt, KeptBudget};
use super::super::error::{TurnError, TurnErrorKind};
use super::super::event::{EventMsg, TurnOutcome};
use super::super::ids::ItemId;
use super::super::items::{ToolItemStatus, TurnItem};
use super::super::settings::ThreadSettings;
use super::super::tools;
use super::request::build_request;
use super::sampling::SamplingError;
use super::turn_context::TurnContext;
use super::turn_error::{client_turn_error, stream_turn_error};
use super::usage::{emit_usage, record_token_count};

/// Most compactions one turn runs: past it, a turn that keeps refilling the context sends its
/// requests as they are, and a refusal as too long ends it.
pub(super) const MAX_COMPACTIONS_PER_TURN: u32 = 8;

/// How many times a summarization request refused as too long is sent again with half the
/// history it carried.
const MAX_SUMMARIZATION_CUTS: u32 = 4;

/// Why a compaction left the history as it was.
#[derive(Debug)]
pub(super) enum CompactionFailure {
    Interrupted,
    /// The summary could not be had; the error says why, in the provider's terms.
    Failed(TurnError),
}

/// What a turn's compactions have done so far.
#[derive(Debug, Default)]
pub(super) struct TurnCompactions {
    count: u32,
    /// What happened since the turn's last completed response.
    since_response: SinceResponse,
    /// The client was told the bound was reached.
    bound_told: bool,
}

#[derive(Debug, Default)]
enum SinceResponse {
    #[default]
    Nothing,
    Compacted,
    Failed(String),
}

impl TurnCompactions {
    /// A response completed: its count is the one the next decision is made on.
    pub(super) fn response_completed(&mut self) {
        self.since_response = SinceResponse::Nothing;
    }
}

/// The context the next request would fill, as far as the provider told: its count for the
/// thread's last request plus an estimate of what the history gained after the model's last
/// output. `None` when nothing was reported since the history was last replaced.
fn reported_context_tokens(turn: &TurnContext) -> Option<i64> {
    let state = turn.thread.state();
    state.reported_context_tokens.map(|reported| {
        reported.saturating_add(compact::estimate_since_last_output(&state.history))
    })
}

/// Before a sampling request: compacts when the reported context reaches the thread's limit.
/// A compaction that fails is told to the client and the request goes out anyway; only an
/// interrupt stops the turn here.
pub(super) async fn compact_if_needed(
    turn: &TurnContext,
    compactions: &mut TurnCompactions,
) -> Result<(), TurnOutcome> {
    if !matches!(compactions.since_response, SinceResponse::Nothing) {
        return Ok(());
    }
    let Some(size) = reported_context_tokens(turn) else {
        return Ok(());
    };
    let limit = turn.thread.settings().auto_compact_limit();
    if size < limit {
        return Ok(());
    }
    if compactions.count >= MAX_COMPACTIONS_PER_TURN {
        if !compactions.bound_told {
            compactions.bound_told = true;
            let message = format!(
                "this turn compacted its history {MAX_COMPACTIONS_PER_TURN} times and filled \
                 the context again (~{size} tokens, model_auto_compact_token_limit is {limit}); \
                 its requests are sent as they are from now on"
            );
            turn.emit(EventMsg::Warning { message }).await;
        }
        return Ok(());
    }
    match run_counted(turn, compactions).await {
        Ok(()) => Ok(()),
        Err(CompactionFailure::Interrupted) => Err(TurnOutcome::Interrupted),
        Err(CompactionFailure::Failed(error)) => {
            let message = format!(
                "automatic compaction failed ({}); the request is sent with the history as it \
                 was",
                error.message
            );
            turn.emit(EventMsg::Warning { message }).await;
            Ok(())
        }
    }
}

/// The provider refused the turn's request as too long: compacts so the turn can sample again,
/// or, when compaction cannot help, returns the turn's failure.
pub(super) async fn compact_after_refusal(
    turn: &TurnContext,
    compactions: &mut TurnCompactions,
) -> Result<(), TurnOutcome> {
    let cannot_help = match &compactions.since_response {
        SinceResponse::Compacted => Some(("even after the history was compacted", None)),
        SinceResponse::Failed(reason) => {
            Some(("and compacting the history failed", Some(reason.clone())))
        }
        SinceResponse::Nothing if compactions.count >= MAX_COMPACTIONS_PER_TURN => Some((
            "and this turn already compacted its history as often as it may",
            None,
        )),
        SinceResponse::Nothing => None,
    };
    if let Some((why, details)) = cannot_help {
        return Err(context_window_exceeded(why, details));
    }
    tracing::info!(turn_id = %turn.turn_id, "the provider found the request too long; compacting");
    match run_counted(turn, compactions).await {
        Ok(()) => Ok(()),
        Err(CompactionFailure::Interrupted) => Err(TurnOutcome::Interrupted),
        Err(CompactionFailure::Failed(error)) => Err(context_window_exceeded(
            "and compacting the history failed",
            Some(error.message),
        )),
    }
}

/// Runs one of the turn's automatic compactions, counted against its bound.
async fn run_counted(
    turn: &TurnContext,
    compactions: &mut TurnCompactions,
) -> Result<(), CompactionFailure> {
    compactions.count += 1;
    let result = compact(turn).await;
    compactions.since_response = match &result {
        Err(CompactionFailure::Failed(error)) => SinceResponse::Failed(error.message.clone()),
        _ => SinceResponse::Compacted,
    };
    result
}

/// The turn's end when the conversation does not fit the model's context: a message about the
/// context (not about the request that found it out), and `contextWindowExceeded`.
fn context_window_exceeded(why: &str, details: Option<String>) -> TurnOutcome {
    TurnOutcome::Failed(TurnError {
        message: format!(
            "the conversation no longer fits in the model's context window: the provider \
             refused the request as too long, {why}. Start a new thread, or leave out large \
             inputs"
        ),
        kind: TurnErrorKind::ContextWindowExceeded,
        details,
    })
}

/// Compacts the thread's history now (see the module docs). The item completes whatever
/// happens: `failed`, with the reason, when the history was left as it was.
pub(super) async fn compact(turn: &TurnContext) -> Result<(), CompactionFailure> {
    let id = ItemId::new();
    turn.item_started(TurnItem::ContextCompaction {
        id: id.clone(),
        status: ToolItemStatus::InProgress,
        error: None,
    })
    .await;
    let result = replace_history(turn).await;
    let (status, error) = match &result {
        Ok(()) => (ToolItemStatus::Completed, None),
        Err(CompactionFailure::Interrupted) => (
            ToolItemStatus::Failed,
            Some("the turn was interrupted".to_string()),
        ),
        Err(CompactionFailure::Failed(error)) => {
            (ToolItemStatus::Failed, Some(error.message.clone()))
        }
    };
    turn.item_completed(TurnItem::ContextCompaction { id, status, error })
        .await;
    result
}

/// Asks for the summary, then swaps the history for the compacted one and records the swap.
async fn replace_history(turn: &TurnContext) -> Result<(), CompactionFailure> {
    let settings = turn.thread.settings();
    let history = turn.thread.history();
    let summary = summarize(turn, &settings, &history).await?;
    let budget = KeptBudget::for_limit(settings.auto_compact_limit());
    let replacement = compact::replacement_history(&history, &summary, budget);
    let next = compact::estimate_request(&sampling_request(turn, &settings, replacement.clone()));
    let total = {
        let mut state = turn.thread.state();
        state.history = replacement.clone();
        state.reported_context_tokens = None;
        state.total_usage
    };
    turn.persist(RolloutItem::Compacted {
        summary,
        replacement_history: replacement,
    })
    .await;
    report_context_size(turn, &settings, total, next).await;
    Ok(())
}

/// The request the turn would send next for `history`.
fn sampling_request(
    turn: &TurnContext,
    settings: &ThreadSettings,
    history: Vec<ResponseItem>,
) -> ResponsesRequest {
    build_request(
        settings,
        history,
        turn.thread.id.as_str(),
        tools::tool_specs(settings),
        turn.output_schema.as_ref(),
        turn.skills_instructions.as_deref(),
    )
}

/// After a compaction: the thread's total is unchanged (the summarization request was counted
/// when it completed), and `last` becomes the estimated size of the compacted request, so a
/// client showing how full the context is sees it shrink. Persisted like any usage line, so a
/// resume reports the same (and knows it for an estimate: it follows the `compacted` line).
async fn report_context_size(
    turn: &TurnContext,
    settings: &ThreadSettings,
    total: TokenUsage,
    estimated: i64,
) {
    let last = TokenUsage {
        total_tokens: estimated,
        ..TokenUsage::default()
    };
    record_token_count(turn, total, last, Some(settings.context_window())).await;
}

/// Whether a request failed because the provider found it too long for the model's context.
pub(super) fn is_context_window_error(failure: &SamplingError) -> bool {
    match failure {
        SamplingError::Client(ClientError::Http { code, .. }) => {
            code.as_deref() == Some("context_length_exceeded")
        }
        _ => matches!(
            failure.stream_error(),
            Some(StreamError::Api(ApiError::ContextWindowExceeded(_)))
        ),
    }
}

/// The model's whole context window as far as openturn knows it (configured, else the
/// catalogue's, else the default): the summarization request must fit it, not the compaction
/// limit, which only says when to compact.
fn model_window(settings: &ThreadSettings) -> i64 {
    settings
        .model_context_window
        .or_else(|| settings.model_catalog.context_window(&settings.model))
        .unwrap_or_else(|| settings.context_window())
}

/// Gets the summary: the history (its newest part that fits the model's window, leaving a tenth
/// of it for the answer) followed by the request for a summary. A refusal as too long anyway
/// is answered by sending half as much history, a few times.
async fn summarize(
    turn: &TurnContext,
    settings: &ThreadSettings,
    history: &[ResponseItem],
) -> Result<String, CompactionFailure> {
    let window = model_window(settings);
    let mut budget = window - window / 10;
    let mut cuts = 0u32;
    loop {
        let request = summarization_request(turn, settings, history, budget)?;
        match summarize_with_retries(turn, settings, &request).await? {
            Summarized::Text(summary) => return Ok(summary),
            Summarized::TooLong(error) if cuts < MAX_SUMMARIZATION_CUTS => {
                tracing::info!(turn_id = %turn.turn_id, budget, %error.message,
                    "the summarization request was refused as too long; sending less history");
                cuts += 1;
                budget /= 2;
            }
            Summarized::TooLong(error) => return Err(CompactionFailure::Failed(error)),
        }
    }
}

/// What a summarization request came back with.
enum Summarized {
    Text(String),
    /// The provider refused it as too long for the model's context.
    TooLong(TurnError),
}

/// The history's newest part that fits `budget_tokens` with the request's own overhead,
/// followed by the request for a summary, with no tools: the model is to write, not act.
fn summarization_request(
    turn: &TurnContext,
    settings: &ThreadSettings,
    history: &[ResponseItem],
    budget_tokens: i64,
) -> Result<ResponsesRequest, CompactionFailure> {
    let ask = prompt::summarization_request_message(settings.compact_prompt.as_deref());
    let build = |input: Vec<ResponseItem>| {
        let request = build_request(
            settings,
            input,
            turn.thread.id.as_str(),
            Vec::new(),
            None,
            turn.skills_instructions.as_deref(),
        );
        ResponsesRequest {
            service_tier: turn.service_tier.clone().or(settings.service_tier.clone()),
            ..request
        }
    };
    let overhead = compact::estimate_request(&build(vec![ask.clone()]));
    let Some(mut input) = compact::summarization_input(history, budget_tokens - overhead) else {
        return Err(CompactionFailure::Failed(TurnError {
            message: format!(
                "the summarization request leaves no room for the conversation: the \
                 instructions and the prompt alone take ~{overhead} of the ~{budget_tokens} \
                 tokens it may use"
            ),
            kind: TurnErrorKind::ContextWindowExceeded,
            details: None,
        }));
    };
    input.push(ask);
    Ok(build(input))
}

/// Sends the summarization request, retrying a dropped stream as a turn would; the summary
/// is the text of the assistant messages of the response.
async fn summarize_with_retries(
    turn: &TurnContext,
    settings: &ThreadSettings,
    request: &ResponsesRequest,
) -> Result<Summarized, CompactionFailure> {
    let max_retries = settings.provider.stream_max_retries;
    let mut retries = 0u32;
    loop {
        let failure = match summarize_once(turn, settings, request).await {
            Ok(summary) if summary.trim().is_empty() => {
                return Err(CompactionFailure::Failed(TurnError {
                    message: "the provider answered the summarization request with no text"
                        .to_string(),
                    kind: TurnErrorKind::Other,
                    details: None,
                }))
            }
            Ok(summary) => return Ok(Summarized::Text(summary)),
            Err(SamplingError::Interrupted) => return Err(CompactionFailure::Interrupted),
            Err(failure) => failure,
        };
        let too_long = is_context_window_error(&failure);
        let error = match failure {
            SamplingError::Client(error) => {
                return too_long_or_failed(too_long, client_turn_error(&error));
            }
            SamplingError::Stream(error) | SamplingError::StreamAfterHeaders { error, .. } => error,
            SamplingError::Interrupted => return Err(CompactionFailure::Interrupted),
        };
        if too_long || !error.is_retryable() || retries >= max_retries {
            return too_long_or_failed(too_long, stream_turn_error(&error, retries));
        }
        retries += 1;
        tokio::select! {
            _ = turn.cancel.cancelled() => return Err(CompactionFailure::Interrupted),
            _ = tokio::time::sleep(backoff(retries, error.retry_delay())) => {}
        }
    }
}

fn too_long_or_failed(too_long: bool, error: TurnError) -> Result<Summarized, CompactionFailure> {
    if too_long {
        Ok(Summarized::TooLong(error))
    } else {
        Err(CompactionFailure::Failed(error))
    }
}

async fn summarize_once(
    turn: &TurnContext,
    settings: &ThreadSettings,
    request: &ResponsesRequest,
) -> Result<String, SamplingError> {
    let context = RequestContext {
        thread_id: turn.thread.id.to_string(),
        originator: settings.originator.clone(),
        turn_state: turn.provider_turn_state.clone(),
    };
    let mut stream = tokio::select! {
        _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
        stream = turn.thread.client.stream(&settings.provider, request, &context) => {
            stream.map_err(SamplingError::Client)?
        }
    };
    let mut texts: Vec<String> = Vec::new();
    loop {
        let event = tokio::select! {
            biased;
            _ = turn.cancel.cancelled() => return Err(SamplingError::Interrupted),
            event = stream.next() => event,
        };
        match event {
            None => return Err(SamplingError::Stream(StreamError::ClosedBeforeCompleted)),
            Some(Err(error)) => return Err(SamplingError::Stream(error)),
            Some(Ok(ResponseEvent::OutputItemDone(item))) => texts.extend(assistant_text(&item)),
            Some(Ok(ResponseEvent::Completed { token_usage, .. })) => {
                // The summarization request is billed like any other: its usage counts.
                emit_usage(turn, token_usage, None, Some(settings.context_window())).await;
                return Ok(texts.join("\n"));
            }
            Some(Ok(_)) => {}
        }
    }
}

/// The text of an assistant message.
fn assistant_text(item: &ResponseItem) -> Option<String> {
    match item {
        ResponseItem::Message { role, content, .. } if role == "assistant" => Some(
            content
                .iter()
                .filter_map(|piece| match piece {
                    ContentItem::OutputText { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
}
