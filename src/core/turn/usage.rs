//! Token usage: the thread's running total, and the one way a count is recorded and told to the
//! client (rollout line, then `TokenCount`). Sampling, a failed response and compaction all
//! report through here, so a resumed thread reads back exactly what the client was shown.

use crate::rollout::RolloutItem;
use crate::wire::event::RateLimitSnapshot;
use crate::wire::TokenUsage;

use super::super::event::EventMsg;
use super::turn_context::TurnContext;

/// A response that failed still reports usage and rate limits, as the reference does when the
/// failure ends the turn. The usage the failed response itself reported (if any) is added to the
/// thread's total: the provider consumed, and bills, those tokens whether or not the response
/// completed.
pub(super) async fn emit_failed_usage(
    turn: &TurnContext,
    rate_limits: Option<RateLimitSnapshot>,
    usage: Option<TokenUsage>,
) {
    let window = Some(turn.thread.settings().context_window());
    emit_usage(turn, usage, rate_limits, window).await;
}

/// Adds what one response used to the thread's total, keeps its count as the context's size
/// for automatic compaction, then records and reports the count and the response's rate limits.
pub(super) async fn emit_usage(
    turn: &TurnContext,
    usage: Option<TokenUsage>,
    rate_limits: Option<RateLimitSnapshot>,
    model_context_window: Option<i64>,
) {
    let last = usage.unwrap_or_default();
    let total = {
        let mut thread_state = turn.thread.state();
        if usage.is_some() {
            // What the provider counted is the measure automatic compaction decides on.
            thread_state.reported_context_tokens = Some(last.total_tokens);
        }
        let total = &mut thread_state.total_usage;
        total.input_tokens += last.input_tokens;
        total.cached_input_tokens += last.cached_input_tokens;
        total.output_tokens += last.output_tokens;
        total.reasoning_output_tokens += last.reasoning_output_tokens;
        total.total_tokens += last.total_tokens;
        *total
    };
    record_token_count(turn, total, last, model_context_window).await;
    turn.emit(EventMsg::RateLimits {
        turn_id: turn.turn_id.clone(),
        snapshot: rate_limits,
    })
    .await;
}

/// Records a token count in the rollout, then tells the client. Persisted so a resumed thread
/// reports its usage and keeps counting from its total.
pub(super) async fn record_token_count(
    turn: &TurnContext,
    total: TokenUsage,
    last: TokenUsage,
    model_context_window: Option<i64>,
) {
    turn.persist(RolloutItem::TokenUsage {
        turn_id: turn.turn_id.to_string(),
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
}
