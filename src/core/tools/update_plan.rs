//! `update_plan`: the model keeps a short checklist of its work. Each call replaces the whole
//! plan; the client hears it as `turn/plan/updated` and the model gets a plain acknowledgement.
//! The plan is not an item of the turn: it lives in the call and its output, which history and
//! the rollout already keep.

use serde::Deserialize;
use serde_json::{json, Value};

use super::super::event::{EventMsg, PlanStep, PlanStepStatus};
use super::super::ids::ItemId;
use super::handle::TurnHandle;
use super::output::ToolOutput;

pub(crate) const TOOL_NAME: &str = "update_plan";

/// What the model sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdatePlanArgs {
    #[serde(default)]
    pub explanation: Option<String>,
    pub plan: Vec<PlanStep>,
}

impl UpdatePlanArgs {
    /// A plan the model can be held to: at most one step in progress.
    pub(crate) fn check(&self) -> Result<(), String> {
        let in_progress = self
            .plan
            .iter()
            .filter(|step| step.status == PlanStepStatus::InProgress)
            .count();
        if in_progress > 1 {
            return Err(format!(
                "update_plan: {in_progress} steps are in_progress; at most one step may be"
            ));
        }
        Ok(())
    }
}

pub(crate) fn spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": "Record or revise your plan for the current task as a short list of steps. \
    Send the whole plan each time; mark at most one step in_progress, and mark steps completed as you \
    finish them. Skip it for tasks you can finish in one or two steps.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "explanation": {
                    "type": "string",
                    "description": "Optional note on why the plan changed.",
                },
                "plan": {
                    "type": "array",
                    "description": "Every step of the plan, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string", "description": "What this step does, in a few words."},
                            "status": {
                                "type": "string",
                                "description": "One of: pending, in_progress, completed.",
                                "enum": ["pending", "in_progress", "completed"],
                            },
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false,
                    },
                },
            },
            "required": ["plan"],
            "additionalProperties": false,
        },
    })
}

/// Tells the client and acknowledges to the model.
pub(crate) async fn run(turn: &TurnHandle, call_id: ItemId, args: UpdatePlanArgs) -> ToolOutput {
    turn.emit(EventMsg::PlanUpdated {
        turn_id: turn.turn_id.clone(),
        explanation: args.explanation,
        plan: args.plan,
    })
    .await;
    ToolOutput {
        call_id,
        custom: false,
        text: "Plan updated".to_string(),
    }
}
