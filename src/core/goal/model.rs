//! The goal's data and every rule that changes it: pure (no I/O, no clock, no thread), so each
//! rule is tested on its own. See the module above for the whole picture.

use serde::{Deserialize, Serialize};

/// Automatic goal turns in a row that may call no tool (other than the goal tools) before the
/// goal is marked `blocked`: a model that only talks is not moving the work, and continuing
/// would spend tokens forever on a goal without a budget.
pub const MAX_TURNS_WITHOUT_PROGRESS: u32 = 3;

/// The tools through which the model reads and changes the goal; calling them is not progress.
pub(crate) const GOAL_TOOL_NAMES: [&str; 3] = ["get_goal", "create_goal", "update_goal"];

/// Where a goal stands. Only `Active` keeps the thread working on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GoalStatus {
    Active,
    Paused,
    Blocked,
    UsageLimited,
    BudgetLimited,
    Complete,
}

impl GoalStatus {
    /// The wire spelling, for tool outputs and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Blocked => "blocked",
            GoalStatus::UsageLimited => "usageLimited",
            GoalStatus::BudgetLimited => "budgetLimited",
            GoalStatus::Complete => "complete",
        }
    }
}

/// A goal as it is stored (the rollout's `thread_goal` line) and told. Times are Unix seconds;
/// the time used is kept in milliseconds so short turns add up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    pub objective: String,
    pub status: GoalStatus,
    pub token_budget: Option<i64>,
    pub tokens_used: i64,
    pub time_used_ms: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Goal {
    pub fn time_used_seconds(&self) -> i64 {
        self.time_used_ms / 1000
    }

    /// Tokens left of the budget (never negative), when there is a budget.
    pub fn remaining_tokens(&self) -> Option<i64> {
        self.token_budget
            .map(|budget| (budget - self.tokens_used).max(0))
    }
}

/// Why a goal change was refused. Each names what to fix, for the client or the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoalError {
    #[error("`objective` must not be empty")]
    EmptyObjective,
    #[error("`tokenBudget` must be a positive number of tokens, got {0}")]
    NonPositiveBudget(i64),
    #[error("the thread has no goal; give an `objective` to set one")]
    NoGoal,
    #[error(
        "the thread already has an unfinished goal ({0}); use update_goal to change its status"
    )]
    UnfinishedGoal(&'static str),
    #[error("update_goal cannot set status `{0}`; use complete, blocked or paused")]
    StatusNotForModel(String),
}

/// What `thread/goal/set` asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoalRequest {
    pub objective: Option<String>,
    pub status: Option<GoalStatus>,
    pub token_budget: Option<i64>,
}

/// How a turn ended, as the goal's accounting needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnEndKind {
    Completed,
    Interrupted,
    Failed,
}

/// What the goal's accounting decided at a turn's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnVerdict {
    /// The goal after accounting (to announce and persist).
    pub goal: Goal,
    /// Start another turn for it.
    pub continue_goal: bool,
    /// Why the goal stopped when it did, for a warning the client sees.
    pub stopped_because: Option<String>,
}

/// A thread's goal and the bookkeeping its continuation needs; kept in the thread's state.
#[derive(Debug, Clone, Default)]
pub(crate) struct GoalRuntime {
    pub goal: Option<Goal>,
    /// The thread's token total when the goal last counted usage: what a turn used is the
    /// difference at its end.
    usage_mark: i64,
    /// Whether the objective was put in the history since it was set (told once per goal).
    pub objective_told: bool,
    /// Automatic goal turns in a row that called no tool.
    turns_without_progress: u32,
    /// The automatic turn running for the goal, and where the history stood when it was
    /// admitted (what it added is what it did).
    pub goal_turn: Option<(super::super::ids::TurnId, usize)>,
}

impl GoalRuntime {
    /// A runtime holding `goal` as a resumed thread read it; usage counts on from `total`.
    pub(crate) fn restored(goal: Option<Goal>, total_tokens: i64) -> GoalRuntime {
        GoalRuntime {
            objective_told: goal.is_some(),
            goal,
            usage_mark: total_tokens,
            ..GoalRuntime::default()
        }
    }

    /// Applies `thread/goal/set`. A new objective replaces the goal (fresh counters); without
    /// one, the current goal's status and budget change.
    pub(crate) fn set(
        &mut self,
        request: GoalRequest,
        now: i64,
        total_tokens: i64,
    ) -> Result<Goal, GoalError> {
        if let Some(budget) = request.token_budget.filter(|budget| *budget <= 0) {
            return Err(GoalError::NonPositiveBudget(budget));
        }
        let objective = match request.objective.map(|text| text.trim().to_string()) {
            Some(text) if text.is_empty() => return Err(GoalError::EmptyObjective),
            other => other,
        };
        let replaces = match (&objective, &self.goal) {
            (Some(new), Some(current)) => *new != current.objective,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return Err(GoalError::NoGoal),
        };
        let was_active = !replaces && self.is_active();
        if replaces {
            self.goal = Some(Goal {
                objective: objective.unwrap_or_default(),
                status: GoalStatus::Active,
                token_budget: None,
                tokens_used: 0,
                time_used_ms: 0,
                created_at: now,
                updated_at: now,
            });
            self.objective_told = false;
        }
        let Some(goal) = self.goal.as_mut() else {
            return Err(GoalError::NoGoal);
        };
        if let Some(status) = request.status {
            goal.status = status;
        }
        if request.token_budget.is_some() {
            goal.token_budget = request.token_budget;
        }
        goal.updated_at = now;
        let goal = goal.clone();
        if goal.status == GoalStatus::Active && !was_active {
            self.activated(total_tokens);
        }
        Ok(goal)
    }

    /// `create_goal` from the model: refused while an unfinished goal exists.
    pub(crate) fn create_by_model(
        &mut self,
        objective: String,
        token_budget: Option<i64>,
        now: i64,
        total_tokens: i64,
    ) -> Result<Goal, GoalError> {
        if let Some(current) = self.goal.as_ref() {
            if current.status != GoalStatus::Complete {
                return Err(GoalError::UnfinishedGoal(current.status.as_str()));
            }
        }
        self.goal = None;
        self.set(
            GoalRequest {
                objective: Some(objective),
                status: Some(GoalStatus::Active),
                token_budget,
            },
            now,
            total_tokens,
        )
    }

    /// `update_goal` from the model: it may only finish, block or pause the goal.
    pub(crate) fn update_by_model(&mut self, status: &str, now: i64) -> Result<Goal, GoalError> {
        let status = match status {
            "complete" => GoalStatus::Complete,
            "blocked" => GoalStatus::Blocked,
            "paused" => GoalStatus::Paused,
            other => return Err(GoalError::StatusNotForModel(other.to_string())),
        };
        let goal = self.goal.as_mut().ok_or(GoalError::NoGoal)?;
        goal.status = status;
        goal.updated_at = now;
        Ok(goal.clone())
    }

    /// Removes the goal; true when there was one.
    pub(crate) fn clear(&mut self) -> bool {
        let had = self.goal.take().is_some();
        self.goal_turn = None;
        self.turns_without_progress = 0;
        had
    }

    pub(crate) fn is_active(&self) -> bool {
        self.goal
            .as_ref()
            .is_some_and(|goal| goal.status == GoalStatus::Active)
    }

    /// The goal (re)became active: usage counts from here, and the progress audit restarts.
    fn activated(&mut self, total_tokens: i64) {
        self.usage_mark = total_tokens;
        self.turns_without_progress = 0;
    }

    /// Counts a finished turn on the goal and decides whether another turn follows. `None` when
    /// no active goal was there to count on. `progressed` tells whether the turn called a tool
    /// (other than the goal tools); only automatic turns are audited for progress.
    pub(crate) fn account_turn_end(
        &mut self,
        turn_id: &super::super::ids::TurnId,
        end: TurnEndKind,
        progressed: bool,
        duration_ms: i64,
        total_tokens: i64,
        now: i64,
    ) -> Option<TurnVerdict> {
        let automatic = match self.goal_turn.take() {
            Some((goal_turn, _)) if goal_turn == *turn_id => true,
            other => {
                self.goal_turn = other;
                false
            }
        };
        if !self.is_active() {
            self.usage_mark = total_tokens;
            return None;
        }
        let used = (total_tokens - self.usage_mark).max(0);
        self.usage_mark = total_tokens;
        self.turns_without_progress = match (automatic, progressed) {
            (true, false) => self.turns_without_progress + 1,
            _ => 0,
        };
        let stalled = self.turns_without_progress >= MAX_TURNS_WITHOUT_PROGRESS;
        let goal = self.goal.as_mut()?;
        goal.tokens_used += used;
        goal.time_used_ms += duration_ms.max(0);
        goal.updated_at = now;
        let over_budget = goal
            .token_budget
            .is_some_and(|budget| goal.tokens_used >= budget);
        let mut stopped_because = None;
        match end {
            TurnEndKind::Failed => goal.status = GoalStatus::Blocked,
            _ if over_budget => goal.status = GoalStatus::BudgetLimited,
            TurnEndKind::Completed if stalled => {
                goal.status = GoalStatus::Blocked;
                stopped_because = Some(format!(
                    "the goal is blocked: {MAX_TURNS_WITHOUT_PROGRESS} automatic turns in a row \
                     called no tool, so continuing would not move the work"
                ));
            }
            TurnEndKind::Completed | TurnEndKind::Interrupted => {}
        }
        let goal = goal.clone();
        if goal.status != GoalStatus::Active {
            self.turns_without_progress = 0;
        }
        Some(TurnVerdict {
            continue_goal: goal.status == GoalStatus::Active && end == TurnEndKind::Completed,
            goal,
            stopped_because,
        })
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
