//! What the model is told about its goal: the objective, once per goal, and before every
//! automatic turn the continuation message with the budget as it stands. Both are user-role
//! messages the model sees and the client does not (no item is announced for them).

use crate::wire::ResponseItem;

use super::model::Goal;

/// The continuation message; `{budget}` is replaced by the budget lines.
const CONTINUATION: &str = include_str!("continuation.md");

/// The message that carries the objective into the history.
pub(crate) fn objective_message(goal: &Goal) -> ResponseItem {
    ResponseItem::user_text(format!(
        "<codex_internal_context source=\"goal_objective\">\n{}\n</codex_internal_context>",
        goal.objective
    ))
}

/// The message that starts an automatic goal turn.
pub(crate) fn continuation_message(goal: &Goal) -> ResponseItem {
    ResponseItem::user_text(
        CONTINUATION
            .trim_end()
            .replace("{budget}", &budget_lines(goal)),
    )
}

fn budget_lines(goal: &Goal) -> String {
    let used = format!("- Tokens used: {}", goal.tokens_used);
    match (goal.token_budget, goal.remaining_tokens()) {
        (Some(budget), Some(remaining)) => {
            format!("{used}\n- Token budget: {budget}\n- Tokens remaining: {remaining}")
        }
        _ => format!("{used}\n- Token budget: none"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::goal::model::GoalStatus;

    #[test]
    fn the_continuation_carries_the_budget_as_it_stands() {
        let goal = Goal {
            objective: "ship it".into(),
            status: GoalStatus::Active,
            token_budget: Some(1_000),
            tokens_used: 250,
            time_used_ms: 0,
            created_at: 0,
            updated_at: 0,
        };
        let text = match continuation_message(&goal) {
            ResponseItem::Message { content, .. } => format!("{content:?}"),
            other => panic!("unexpected {other:?}"),
        };
        assert!(
            text.contains("- Tokens used: 250\\n- Token budget: 1000\\n- Tokens remaining: 750"),
            "{text}"
        );
        assert!(!text.contains("{budget}"));
        let unbudgeted = Goal {
            token_budget: None,
            ..goal
        };
        let text = format!("{:?}", continuation_message(&unbudgeted));
        assert!(text.contains("- Token budget: none"), "{text}");
    }
}
