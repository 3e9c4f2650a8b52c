//! The goal's rules, one at a time.

use super::*;
use crate::core::ids::TurnId;

fn set(
    runtime: &mut GoalRuntime,
    objective: Option<&str>,
    status: Option<GoalStatus>,
) -> Result<Goal, GoalError> {
    runtime.set(
        GoalRequest {
            objective: objective.map(str::to_string),
            status,
            token_budget: None,
        },
        10,
        0,
    )
}

#[test]
fn a_new_objective_starts_an_active_goal_and_changes_without_one_need_a_goal() {
    let mut runtime = GoalRuntime::default();
    assert_eq!(
        set(&mut runtime, None, Some(GoalStatus::Active)),
        Err(GoalError::NoGoal)
    );
    assert_eq!(
        set(&mut runtime, Some("  "), None),
        Err(GoalError::EmptyObjective)
    );
    let goal = set(&mut runtime, Some("ship"), None).unwrap();
    assert_eq!(
        (goal.objective.as_str(), goal.status),
        ("ship", GoalStatus::Active)
    );
    let paused = set(&mut runtime, None, Some(GoalStatus::Paused)).unwrap();
    assert_eq!(paused.status, GoalStatus::Paused);
    let budget = runtime.set(
        GoalRequest {
            token_budget: Some(0),
            ..GoalRequest::default()
        },
        10,
        0,
    );
    assert_eq!(budget, Err(GoalError::NonPositiveBudget(0)));
}

#[test]
fn the_model_may_not_replace_an_unfinished_goal_nor_resume_one() {
    let mut runtime = GoalRuntime::default();
    runtime
        .create_by_model("a".into(), Some(100), 1, 0)
        .unwrap();
    assert_eq!(
        runtime.create_by_model("b".into(), None, 1, 0),
        Err(GoalError::UnfinishedGoal("active"))
    );
    assert!(matches!(
        runtime.update_by_model("active", 1),
        Err(GoalError::StatusNotForModel(_))
    ));
    assert_eq!(
        runtime.update_by_model("complete", 2).unwrap().status,
        GoalStatus::Complete
    );
    let next = runtime.create_by_model("b".into(), None, 3, 0).unwrap();
    assert_eq!((next.objective.as_str(), next.tokens_used), ("b", 0));
}

#[test]
fn turns_count_tokens_and_time_and_stop_on_budget_failure_or_no_progress() {
    let turn = |runtime: &mut GoalRuntime, end, progressed, total| {
        let id = TurnId::new();
        runtime.goal_turn = Some((id.clone(), 0));
        runtime
            .account_turn_end(&id, end, progressed, 1_500, total, 20)
            .unwrap()
    };
    let mut runtime = GoalRuntime::default();
    runtime
        .set(
            GoalRequest {
                objective: Some("x".into()),
                status: None,
                token_budget: Some(250),
            },
            1,
            1_000,
        )
        .unwrap();
    let first = turn(&mut runtime, TurnEndKind::Completed, true, 1_100);
    assert!(first.continue_goal);
    assert_eq!(
        (first.goal.tokens_used, first.goal.time_used_seconds()),
        (100, 1)
    );
    let over = turn(&mut runtime, TurnEndKind::Completed, true, 1_300);
    assert_eq!(
        (over.goal.status, over.continue_goal),
        (GoalStatus::BudgetLimited, false)
    );

    let mut runtime = GoalRuntime::default();
    set(&mut runtime, Some("y"), None).unwrap();
    let interrupted = turn(&mut runtime, TurnEndKind::Interrupted, true, 0);
    assert_eq!(
        (interrupted.goal.status, interrupted.continue_goal),
        (GoalStatus::Active, false)
    );
    let failed = turn(&mut runtime, TurnEndKind::Failed, true, 0);
    assert_eq!(failed.goal.status, GoalStatus::Blocked);

    let mut runtime = GoalRuntime::default();
    set(&mut runtime, Some("z"), None).unwrap();
    for _ in 1..MAX_TURNS_WITHOUT_PROGRESS {
        assert!(turn(&mut runtime, TurnEndKind::Completed, false, 0).continue_goal);
    }
    let stalled = turn(&mut runtime, TurnEndKind::Completed, false, 0);
    assert_eq!(
        (stalled.goal.status, stalled.continue_goal),
        (GoalStatus::Blocked, false)
    );
    assert!(stalled.stopped_because.is_some());
}
