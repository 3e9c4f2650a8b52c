//! Compaction inside a turn: a summarization request to the thread's own provider, then the
//! history swapped for the compacted one and the swap recorded.
//!
//! Invariants:
//! - Atomic: the summary is requested from a snapshot of the history; the live history is
//!   replaced only once the summary exists and the compacted history is known to fit, and the
//!   rollout records the replacement as one `compacted` line. An interrupted or failed
//!   compaction leaves history and rollout as they were. (While it runs, nothing else writes
//!   the history: the turn running it is the thread's only writer, and its tools are drained.)
//! - Bounded: the summarization request itself fits the limit (the oldest history is left out
//!   of it when needed); the compacted history must come out under the limit or the
//!   compaction fails; a turn compacts at most [`MAX_COMPACTIONS_PER_TURN`] times.
//! - Visible: each compaction is a `contextCompaction` item of the turn that ran it, stored
//!   with the turn so `thread/read` shows it.

use crate::client::retry::backoff;
use crate::client::{ClientError, RequestContext};
use crate::rollout::RolloutItem;
use crate::wire::item::ContentItem;
use crate::wire::{
    ApiError, ResponseEvent, ResponseItem, ResponsesRequest, StreamError, TokenUsage,
};

use super::super::compact::{self, prompt, KeptBudget};
use super::super::error::{TurnError, TurnErrorKind};
use super::super::event::TurnOutcome;
use super::super::ids::ItemId;
use super::super::items::TurnItem;
use super::super::settings::ThreadSettings;
use super::super::tools;
use super::request::build_request;
use super::sampling::SamplingError;
use super::turn_context::TurnContext;
use super::turn_error::{client_turn_error, stream_turn_error};
use super::usage::{emit_usage, record_token_count};

/// Most compactions one turn may run: a model whose work cannot be summarized small enough
/// fails the turn with a clear error instead of compacting forever.
pub(super) const MAX_COMPACTIONS_PER_TURN: u32 = 8;

/// The estimated size of the turn's next sampling request: the larger of the estimate of the
/// whole request and the provider's last reported count plus an estimate of what came since.
pub(super) fn next_request_tokens(turn: &TurnContext, settings: &ThreadSettings) -> i64 {
    let (history, baseline) = {
        let state = turn.thread.state();
        (state.history.clone(), state.context_baseline)
    };
    let reported = baseline
        .filter(|(_, length)| *length <= history.len())
        .map(|(tokens, length)| tokens.saturating_add(compact::estimate_items(&history[length..])));
    let estimated = compact::estimate_request(&sampling_request(turn, settings, history));
    reported.map_or(estimated, |reported| reported.max(estimated))
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

/// Before a sampling request: compacts when the request would reach the thread's limit.
/// `done` counts this turn's compactions.
pub(super) async fn compact_if_needed(
    turn: &TurnContext,
    done: &mut u32,
) -> Result<(), TurnOutcome> {
    let settings = turn.thread.settings();
    let limit = settings.auto_compact_limit();
    let size = next_request_tokens(turn, &settings);
    if size < limit {
        return Ok(());
    }
    if *done >= MAX_COMPACTIONS_PER_TURN {
        return Err(failed(format!(
            "the next request (~{size} tokens) is over model_auto_compact_token_limit ({limit}) \
             again after {done} compactions in this turn; the turn was stopped rather than \
             compact without end. Raise the limit, or start a new thread"
        )));
    }
    *done += 1;
    compact(turn).await
}

/// Compacts the thread's history now (see the module docs).
pub(super) async fn compact(turn: &TurnContext) -> Result<(), TurnOutcome> {
    let item = TurnItem::ContextCompaction { id: ItemId::new() };
    turn.item_started(item.clone()).await;
    let settings = turn.thread.settings();
    let limit = settings.auto_compact_limit();
    let history = turn.thread.history();
    let request = summarization_request(turn, &settings, &history, limit)?;
    let summary = summarize(turn, &settings, &request).await?;
    let replacement =
        compact::replacement_history(&history, &summary, KeptBudget::for_limit(limit));
    let next = compact::estimate_request(&sampling_request(turn, &settings, replacement.clone()));
    if next >= limit {
        return Err(failed(format!(
            "the compacted history (~{next} tokens with the summary and the kept user \
             messages) is still over model_auto_compact_token_limit ({limit}); the history was \
             left as it was"
        )));
    }
    let total = {
        let mut state = turn.thread.state();
        state.history = replacement.clone();
        state.context_baseline = None;
        state.total_usage
    };
    turn.persist(RolloutItem::Compacted {
        summary,
        replacement_history: replacement,
    })
    .await;
    report_context_size(turn, &settings, total, next).await;
    turn.item_completed(item).await;
    Ok(())
}

/// After a compaction: the thread's total is unchanged (the summarization request was counted
/// when it completed), and `last` becomes the estimated size of the compacted request, so a
/// client showing how full the context is sees it shrink. Persisted like any usage line, so a
/// resume reports the same.
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

/// Whether a request failed because the provider found it too long for the model's context:
/// then the turn compacts and samples again, as if the estimate had caught it.
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

/// The history (its newest part that fits) followed by the request for a summary, with no
/// tools: the model is to write, not act.
fn summarization_request(
    turn: &TurnContext,
    settings: &ThreadSettings,
    history: &[ResponseItem],
    limit: i64,
) -> Result<ResponsesRequest, TurnOutcome> {
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
    let Some(mut input) = compact::summarization_input(history, limit - overhead) else {
        return Err(failed(format!(
            "model_auto_compact_token_limit ({limit}) leaves no room for the conversation in \
             the summarization request: the instructions and the prompt alone take ~{overhead} \
             tokens. Raise the limit"
        )));
    };
    input.push(ask);
    Ok(build(input))
}

/// Sends the summarization request, retrying a dropped stream as a turn would; the summary
/// is the text of the assistant messages of the response.
async fn summarize(
    turn: &TurnContext,
    settings: &ThreadSettings,
    request: &ResponsesRequest,
) -> Result<String, TurnOutcome> {
    let max_retries = settings.provider.stream_max_retries;
    let mut retries = 0u32;
    loop {
        let error = match summarize_once(turn, settings, request).await {
            Ok(summary) if summary.trim().is_empty() => {
                return Err(compaction_failed(TurnError {
                    message: "the provider answered the summarization request with no text"
                        .to_string(),
                    kind: TurnErrorKind::Other,
                    details: None,
                }))
            }
            Ok(summary) => return Ok(summary),
            Err(SamplingError::Interrupted) => return Err(TurnOutcome::Interrupted),
            Err(SamplingError::Client(error)) => {
                return Err(compaction_failed(client_turn_error(&error)))
            }
            Err(SamplingError::Stream(error) | SamplingError::StreamAfterHeaders { error, .. }) => {
                error
            }
        };
        if !error.is_retryable() || retries >= max_retries {
            return Err(compaction_failed(stream_turn_error(&error, retries)));
        }
        retries += 1;
        tokio::select! {
            _ = turn.cancel.cancelled() => return Err(TurnOutcome::Interrupted),
            _ = tokio::time::sleep(backoff(retries, error.retry_delay())) => {}
        }
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

fn failed(message: String) -> TurnOutcome {
    TurnOutcome::Failed(TurnError {
        message: format!("compaction failed: {message}"),
        kind: TurnErrorKind::ContextWindowExceeded,
        details: None,
    })
}

/// A provider error met while summarizing: its own kind, and a message that says what it hit.
fn compaction_failed(error: TurnError) -> TurnOutcome {
    TurnOutcome::Failed(TurnError {
        message: format!(
            "compaction failed (the history was left as it was): {}",
            error.message
        ),
        ..error
    })
}
