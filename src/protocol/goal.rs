//! `thread/goal/*`: a thread's long-running goal (an objective the thread keeps working toward
//! across turns), its status and what it has used; and the `thread/goal/updated` /
//! `thread/goal/cleared` notifications. Plain data: what a goal does lives in `core::goal`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a goal stands. Only `active` keeps the thread working on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadGoalStatus {
    Active,
    Paused,
    Blocked,
    UsageLimited,
    BudgetLimited,
    Complete,
}

/// Who asked for a change: a person, or the goal's own lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadGoalMutationOrigin {
    User,
    Automatic,
}

/// A thread's goal as clients see it. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoal {
    pub thread_id: String,
    pub objective: String,
    pub status: ThreadGoalStatus,
    pub token_budget: Option<i64>,
    pub tokens_used: i64,
    pub time_used_seconds: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalGetParams {
    pub thread_id: String,
}

/// The thread's goal, `null` when it has none.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadGoalGetResponse {
    pub goal: Option<ThreadGoal>,
}

/// Sets a new goal (a new `objective`) or changes the current one's status or budget.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalSetParams {
    pub thread_id: String,
    #[serde(default)]
    pub objective: Option<String>,
    #[serde(default)]
    pub status: Option<ThreadGoalStatus>,
    #[serde(default)]
    pub token_budget: Option<i64>,
    #[serde(default)]
    pub origin: Option<ThreadGoalMutationOrigin>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadGoalSetResponse {
    pub goal: ThreadGoal,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalClearParams {
    pub thread_id: String,
    #[serde(default)]
    pub origin: Option<ThreadGoalMutationOrigin>,
}

/// `cleared` is false when the thread had no goal.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ThreadGoalClearResponse {
    pub cleared: bool,
}

/// `thread/goal/updated`: the goal after a change; `turnId` names the turn that changed it
/// (`null` for a change between turns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalUpdatedNotification {
    pub thread_id: String,
    pub turn_id: Option<String>,
    pub goal: ThreadGoal,
}

/// `thread/goal/cleared`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalClearedNotification {
    pub thread_id: String,
}
