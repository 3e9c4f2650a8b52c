//! The goal tools: `get_goal`, `create_goal` and `update_goal`, through which the model reads
//! the thread's goal, sets one when asked to, and reports it complete, blocked or paused. Each
//! answers with the goal as the client sees it (`{"goal", "remainingTokens",
//! "completionBudgetReport"}`, the reference's shape); a refused call answers with the reason.
//! A change is persisted and announced as `thread/goal/updated` for the calling turn.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::rollout::RolloutItem;

use super::super::event::EventMsg;
use super::super::goal::model::{Goal, GoalError, GoalStatus};
use super::super::ids::ItemId;
use super::handle::TurnHandle;
use super::output::ToolOutput;

pub(crate) const GET_GOAL: &str = "get_goal";
pub(crate) const CREATE_GOAL: &str = "create_goal";
pub(crate) const UPDATE_GOAL: &str = "update_goal";

/// A call of one of the goal tools, its arguments checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GoalCall {
    Get,
    Create(CreateGoalArgs),
    Update(UpdateGoalArgs),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateGoalArgs {
    pub objective: String,
    #[serde(default)]
    pub token_budget: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateGoalArgs {
    pub status: String,
}

/// The call `name` names, or `None` when it is not a goal tool; `Err` holds the refusal.
pub(crate) fn parse(name: &str, arguments: &str) -> Option<Result<GoalCall, String>> {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let bad = |error: serde_json::Error| format!("failed to parse function arguments: {error}");
    Some(match name {
        GET_GOAL => Ok(GoalCall::Get),
        CREATE_GOAL => serde_json::from_str(arguments)
            .map(GoalCall::Create)
            .map_err(bad),
        UPDATE_GOAL => serde_json::from_str(arguments)
            .map(GoalCall::Update)
            .map_err(bad),
        _ => return None,
    })
}

/// The three definitions offered to the model; names and parameters as the reference's, the
/// descriptions openturn's own.
pub(crate) fn specs() -> Vec<Value> {
    vec![
        json!({
            "type": "function",
            "name": GET_GOAL,
            "description": "Read this thread's goal: its objective, status, token budget, the \
                tokens and time used so far, and the tokens left.",
            "strict": false,
            "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": CREATE_GOAL,
            "description": "Set a goal for this thread, only when the user or the instructions \
                ask for one; never turn an ordinary task into a goal on your own. Give \
                token_budget only when a budget was asked for. Fails while an unfinished goal \
                exists; change a goal's status with update_goal.",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "objective": {
                        "type": "string",
                        "description": "Required. What the goal is to achieve, concretely. Starts \
                            an active goal when there is none, or replaces a complete one.",
                    },
                    "token_budget": {
                        "type": "integer",
                        "description": "A positive number of tokens the goal may use. Leave it out \
                            unless a budget was asked for.",
                    },
                },
                "required": ["objective"],
                "additionalProperties": false,
            },
        }),
        json!({
            "type": "function",
            "name": UPDATE_GOAL,
            "description": "Change the status of this thread's goal. `complete`: the objective \
                is achieved and verified, nothing required remains (report the tokens used when \
                the goal has a budget). `blocked`: the same blocker has stopped you for three \
                goal turns in a row and you cannot go on without the user or an outside change. \
                `paused`: only when the user asks to pause. Resuming and the budget and usage \
                limits are the user's and the system's to set, not yours.",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "status": {
                        "type": "string",
                        "description": "Required. `complete` when the objective is achieved, \
                            `blocked` after three goal turns stuck on the same blocker, `paused` \
                            only at the user's request.",
                        "enum": ["complete", "blocked", "paused"],
                    },
                },
                "required": ["status"],
                "additionalProperties": false,
            },
        }),
    ]
}

/// Runs a goal call to its output.
pub(crate) async fn run(turn: &TurnHandle, call_id: ItemId, call: GoalCall) -> ToolOutput {
    let changed = !matches!(call, GoalCall::Get);
    let result = turn.env.with_goal(&mut |runtime, now, total| match &call {
        GoalCall::Get => runtime.goal.clone().ok_or(GoalError::NoGoal),
        GoalCall::Create(args) => {
            runtime.create_by_model(args.objective.clone(), args.token_budget, now, total)
        }
        GoalCall::Update(args) => runtime.update_by_model(&args.status, now),
    });
    let text = match result {
        Ok(goal) => {
            if changed {
                announce(turn, &goal).await;
            }
            output_text(&turn.env.thread_id(), &goal)
        }
        Err(GoalError::NoGoal) if !changed => "this thread has no goal".to_string(),
        Err(error) => error.to_string(),
    };
    ToolOutput {
        call_id,
        custom: false,
        text,
    }
}

async fn announce(turn: &TurnHandle, goal: &Goal) {
    turn.persist(RolloutItem::ThreadGoal {
        goal: serde_json::to_value(goal).ok(),
    })
    .await;
    turn.emit(EventMsg::GoalUpdated {
        turn_id: Some(turn.turn_id.clone()),
        goal: goal.clone(),
    })
    .await;
}

/// The goal as the model reads it: the client's fields, what is left of the budget, and, once
/// complete, a note to report the usage.
fn output_text(thread_id: &str, goal: &Goal) -> String {
    let report = (goal.status == GoalStatus::Complete).then_some(
        "The goal is achieved. Tell the user what it used, from this result's goal fields: the \
         tokens used against goal.tokenBudget when there is a budget, and the time used when \
         goal.timeUsedSeconds is above zero, in a short human-friendly form.",
    );
    json!({
        "goal": {
            "threadId": thread_id,
            "objective": goal.objective,
            "status": goal.status.as_str(),
            "tokenBudget": goal.token_budget,
            "tokensUsed": goal.tokens_used,
            "timeUsedSeconds": goal.time_used_seconds(),
            "createdAt": goal.created_at,
            "updatedAt": goal.updated_at,
        },
        "remainingTokens": goal.remaining_tokens(),
        "completionBudgetReport": report,
    })
    .to_string()
}
