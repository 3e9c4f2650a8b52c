//! The lines a forked thread starts with: the source's turns (up to a chosen turn), its names and
//! its model-visible history. A turn still running in the source is not copied as a partial
//! suffix: its user input is kept and it is recorded as interrupted, with a marker in history.
//! What the turn lines' payloads mean is core's: the caller says, through [`TurnLines`], which
//! stored items are the user's input and what the end line of a turn cut short is.

use crate::wire::ResponseItem;

use super::error::RolloutError;
use super::line::RolloutItem;

/// The history marker recorded where a copied turn was cut off.
pub const TURN_ABORTED_MARKER: &str =
    "<turn_aborted>\nThe user interrupted the previous turn; it did not finish.\n</turn_aborted>";

/// What a fork needs to know of the payloads of turn lines, from their owner.
pub trait TurnLines {
    /// Whether a stored turn item is the user's input (kept when its turn is cut short).
    fn is_user_input(&self, item: &serde_json::Value) -> bool;
    /// The end line (interrupted) of a copied turn that had not ended.
    fn cut_short_end(&self, turn_id: &str) -> RolloutItem;
}

/// Copies `items` (a rollout's lines after its session meta) for a fork. With `last_turn_id`, the
/// copy ends after that turn (inclusive); an unknown id is an error.
pub fn fork_items(
    items: &[RolloutItem],
    last_turn_id: Option<&str>,
    lines: &dyn TurnLines,
) -> Result<Vec<RolloutItem>, RolloutError> {
    let mut out = Vec::with_capacity(items.len());
    // Lines of the turn being copied, held back until we know it ended.
    let mut open_turn: Option<(String, Vec<RolloutItem>)> = None;
    let mut found_last = last_turn_id.is_none();
    for item in items {
        match item {
            RolloutItem::TurnStarted { turn_id, .. } => {
                if let Some(open) = open_turn.take() {
                    out.extend(interrupted(open, lines));
                }
                open_turn = Some((turn_id.clone(), vec![item.clone()]));
            }
            RolloutItem::TurnEnded { turn_id, .. } => {
                if let Some((_, mut lines)) = open_turn.take() {
                    lines.push(item.clone());
                    out.extend(lines);
                }
                if last_turn_id == Some(turn_id.as_str()) {
                    return Ok(out);
                }
            }
            RolloutItem::SessionMeta(_) => {}
            other => match open_turn.as_mut() {
                Some((_, lines)) => lines.push(other.clone()),
                None => out.push(other.clone()),
            },
        }
    }
    if let Some(open) = open_turn.take() {
        if last_turn_id == Some(open.0.as_str()) {
            found_last = true;
        }
        out.extend(interrupted(open, lines));
    }
    if !found_last {
        return Err(RolloutError::UnknownTurn(
            last_turn_id.unwrap_or_default().to_string(),
        ));
    }
    Ok(out)
}

/// An unfinished turn: keep what the user said, drop the model's partial work, end it.
fn interrupted(
    (turn_id, copied): (String, Vec<RolloutItem>),
    lines: &dyn TurnLines,
) -> Vec<RolloutItem> {
    let mut out: Vec<RolloutItem> = copied
        .into_iter()
        .filter(|line| match line {
            RolloutItem::TurnStarted { .. } | RolloutItem::ThreadName { .. } => true,
            RolloutItem::TurnItem { item, .. } => lines.is_user_input(item),
            RolloutItem::ResponseItem(ResponseItem::Message { role, .. }) => role == "user",
            _ => false,
        })
        .collect();
    out.push(RolloutItem::ResponseItem(ResponseItem::user_text(
        TURN_ABORTED_MARKER,
    )));
    out.push(lines.cut_short_end(&turn_id));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn started(id: &str) -> RolloutItem {
        RolloutItem::TurnStarted {
            turn_id: id.to_string(),
            started_at: 1,
        }
    }

    fn ended(id: &str) -> RolloutItem {
        RolloutItem::TurnEnded {
            turn_id: id.to_string(),
            status: "completed".to_string(),
            error: None,
            completed_at: 2,
            duration_ms: None,
        }
    }

    /// Stands in for core: user input is what the test's items mark so.
    struct TestLines;

    impl TurnLines for TestLines {
        fn is_user_input(&self, item: &serde_json::Value) -> bool {
            item["type"] == "user_message"
        }

        fn cut_short_end(&self, turn_id: &str) -> RolloutItem {
            cut(turn_id)
        }
    }

    fn cut(id: &str) -> RolloutItem {
        RolloutItem::TurnEnded {
            turn_id: id.to_string(),
            status: "interrupted".to_string(),
            error: None,
            completed_at: 9,
            duration_ms: None,
        }
    }

    fn user(turn: &str) -> Vec<RolloutItem> {
        vec![
            RolloutItem::ResponseItem(ResponseItem::user_text("hi")),
            RolloutItem::TurnItem {
                turn_id: turn.to_string(),
                item: json!({"type": "user_message", "id": "u", "content": []}),
                started_at_ms: Some(5),
                completed_at_ms: Some(6),
            },
        ]
    }

    fn answer() -> RolloutItem {
        RolloutItem::ResponseItem(ResponseItem::Message {
            id: Some("m".to_string()),
            role: "assistant".to_string(),
            content: Vec::new(),
            phase: None,
        })
    }

    #[test]
    fn an_unfinished_turn_is_copied_as_interrupted_without_its_partial_output() {
        let mut items = vec![started("t1")];
        items.extend(user("t1"));
        items.push(answer());
        items.push(ended("t1"));
        items.push(started("t2"));
        items.extend(user("t2"));
        items.push(answer());
        let copied = fork_items(&items, None, &TestLines).unwrap();
        assert_eq!(&copied[..5], &items[..5]);
        let tail = &copied[5..];
        assert_eq!(tail.len(), 5, "{tail:?}");
        assert_eq!(tail[0], started("t2"));
        assert!(matches!(&tail[3], RolloutItem::ResponseItem(item)
            if item.message_text().as_deref() == Some(TURN_ABORTED_MARKER)));
        assert_eq!(tail[4], cut("t2"));
    }

    #[test]
    fn last_turn_id_is_inclusive_and_unknown_ids_are_errors() {
        let mut items = vec![started("t1")];
        items.extend(user("t1"));
        items.push(ended("t1"));
        items.push(started("t2"));
        items.push(ended("t2"));
        let copied = fork_items(&items, Some("t1"), &TestLines).unwrap();
        assert_eq!(copied, items[..4].to_vec());
        assert!(matches!(
            fork_items(&items, Some("nope"), &TestLines),
            Err(RolloutError::UnknownTurn(_))
        ));
    }
}
