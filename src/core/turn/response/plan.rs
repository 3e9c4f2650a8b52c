//! Plan mode: the turn's plan item, opened by the first `<proposed_plan>` in the model's text,
//! fed its deltas, and completed once with the plan's complete text.

use super::super::super::ids::ItemId;
use crate::core::event::EventMsg;
use crate::core::items::TurnItem;

use super::super::turn_context::TurnContext;
use super::announce::{emit_completed, emit_started};

/// Plan mode: the turn's plan item, opened by the first `<proposed_plan>` and completed once.
#[derive(Debug)]
pub(crate) struct PlanItemState {
    pub id: ItemId,
    pub started: bool,
    pub completed: bool,
}

pub(super) async fn start_plan(turn: &TurnContext, plan: &mut PlanItemState) {
    if plan.started || plan.completed {
        return;
    }
    plan.started = true;
    let item = TurnItem::Plan {
        id: plan.id.clone(),
        text: String::new(),
    };
    emit_started(turn, item).await;
}

/// A piece of the plan as it streams; nothing once the plan item completed.
pub(super) async fn plan_delta(turn: &TurnContext, plan: &mut PlanItemState, delta: String) {
    if plan.completed {
        return;
    }
    start_plan(turn, plan).await;
    turn.emit(EventMsg::PlanDelta {
        turn_id: turn.turn_id.clone(),
        item_id: plan.id.clone(),
        delta,
    })
    .await;
}

/// Completes the plan item (once) with the plan's text from the complete message.
pub(super) async fn complete_plan(turn: &TurnContext, plan: &mut PlanItemState, text: String) {
    if plan.completed {
        return;
    }
    start_plan(turn, plan).await;
    plan.completed = true;
    let plan_item = TurnItem::Plan {
        id: plan.id.clone(),
        text,
    };
    emit_completed(turn, plan_item).await;
}
