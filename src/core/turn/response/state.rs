//! The state of one response while it streams: the item receiving deltas, the custom tool input
//! being generated, the plan item, the tools started so far, and what the response will mean for
//! the turn. Its fields are private to the response module, which alone changes them as events
//! arrive; the sampling loop creates the state, feeds it events (see [`super::on_event`]) and
//! reads the outcome through the methods below.

use super::super::super::ids::ItemId;
use std::collections::VecDeque;

use crate::core::items::TurnItem;
use crate::core::settings::{ReasoningSummaryMode, ThreadSettings};
use crate::wire::event::RateLimitSnapshot;
use crate::wire::TokenUsage;

use super::super::turn_context::TurnContext;
use super::active_item::{ActiveItemSlot, ToolInputStream};
use super::in_flight::{self, InFlightTool};
use super::plan::PlanItemState;

/// What one successful response means for the turn.
pub(crate) struct SamplingResult {
    pub needs_follow_up: bool,
    pub final_items: Vec<TurnItem>,
}

/// The state of one response while it streams.
pub(crate) struct ResponseState {
    pub(super) settings: ThreadSettings,
    pub(super) active: ActiveItemSlot,
    pub(super) tool_input: Option<ToolInputStream>,
    pub(super) plan_mode: bool,
    pub(super) plan: Option<PlanItemState>,
    pub(super) show_raw_reasoning: bool,
    pub(super) sequential_cutoff: bool,
    pub(super) in_flight: VecDeque<InFlightTool>,
    pub(super) needs_follow_up: bool,
    pub(super) final_items: Vec<TurnItem>,
    pub(super) rate_limits: Option<RateLimitSnapshot>,
    /// What a failed response reported it used (counted only when the stream then fails).
    pub(super) failed_usage: Option<TokenUsage>,
}

impl ResponseState {
    pub(crate) fn new(turn: &TurnContext, settings: ThreadSettings) -> ResponseState {
        ResponseState {
            plan_mode: settings.plan_mode,
            plan: settings.plan_mode.then(|| PlanItemState {
                id: ItemId::plan_of(&turn.turn_id),
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

    /// The settings the response was requested with.
    pub(crate) fn settings(&self) -> &ThreadSettings {
        &self.settings
    }

    /// The rate limits the provider reported with the response, if any.
    pub(crate) fn rate_limits(&self) -> Option<&RateLimitSnapshot> {
        self.rate_limits.as_ref()
    }

    /// The rate limits and the usage a response reported before its stream failed, taken for
    /// the turn to report.
    pub(crate) fn take_failure_report(
        &mut self,
    ) -> (Option<RateLimitSnapshot>, Option<TokenUsage>) {
        (self.rate_limits.take(), self.failed_usage.take())
    }

    /// Awaits the tools the response started, in call order, recording each output (see
    /// [`in_flight::drain`]).
    pub(crate) async fn drain_tools(&mut self, turn: &TurnContext) {
        in_flight::drain(turn, &mut self.in_flight).await;
    }

    /// What the response means for the turn, once it completed and its tools are drained.
    pub(crate) fn into_result(self) -> SamplingResult {
        SamplingResult {
            needs_follow_up: self.needs_follow_up,
            final_items: self.final_items,
        }
    }
}
