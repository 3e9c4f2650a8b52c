//! What goes into the summarization request and what the history becomes afterwards.
//!
//! Both are bounded: the summarization input is the newest part of the history that fits the
//! budget the caller gives (with any single oversized text clipped), and the user messages a
//! compacted history keeps fit [`KeptBudget`]. Neither function touches the thread: the caller
//! swaps the result in only once the summary exists, so a failed compaction changes nothing.

use crate::wire::item::{ContentItem, FunctionCallOutputBody};
use crate::wire::ResponseItem;

use super::super::context;
use super::estimate::estimate_items;
use super::prompt;

/// How many tokens of the user's own messages a compacted history keeps at most.
pub const KEPT_USER_MESSAGES_MAX_TOKENS: i64 = 20_000;

/// Marks text cut to fit a budget.
const CLIPPED_MARKER: &str = "\n[… cut to fit the context …]\n";

/// The budget for the user messages a compacted history keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptBudget {
    pub max_tokens: i64,
}

impl KeptBudget {
    /// A quarter of the compaction limit, and never more than [`KEPT_USER_MESSAGES_MAX_TOKENS`]:
    /// the summary and the next turn need the rest.
    pub fn for_limit(limit: i64) -> KeptBudget {
        KeptBudget {
            max_tokens: (limit / 4).clamp(0, KEPT_USER_MESSAGES_MAX_TOKENS),
        }
    }
}

/// The history a compaction leaves: context messages, the user's newest messages within
/// `budget` (in their original order), then the summary.
pub fn replacement_history(
    history: &[ResponseItem],
    summary: &str,
    budget: KeptBudget,
) -> Vec<ResponseItem> {
    let mut out = kept_context(history);
    out.extend(kept_user_messages(history, budget));
    out.push(prompt::summary_message(summary));
    out
}

/// The last context message carrying `AGENTS.md` (a change of cwd may have replaced the first
/// one's) and the last one (the environment the model was last told), once each.
fn kept_context(history: &[ResponseItem]) -> Vec<ResponseItem> {
    let docs = history.iter().rposition(context::carries_agents_docs);
    let last = history.iter().rposition(context::is_context_message);
    [docs, last]
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(index, position)| *index == 0 || Some(*position) != docs)
        .map(|(_, position)| history[position].clone())
        .collect()
}

/// A message the user wrote: user role, and neither context, an earlier summary, nor a note
/// the turn loop added.
fn is_users_own_message(item: &ResponseItem) -> bool {
    matches!(item, ResponseItem::Message { role, .. } if role == "user")
        && !context::is_context_message(item)
        && !prompt::is_summary_message(item)
        && !prompt::is_turn_aborted_note(item)
}

fn kept_user_messages(history: &[ResponseItem], budget: KeptBudget) -> Vec<ResponseItem> {
    let mut kept = Vec::new();
    let mut left = budget.max_tokens;
    for item in history
        .iter()
        .rev()
        .filter(|item| is_users_own_message(item))
    {
        let cost = estimate_items(std::slice::from_ref(item));
        if cost <= left {
            left -= cost;
            kept.push(item.clone());
            continue;
        }
        // The newest message is worth keeping even when alone it is over the budget: the user
        // is owed what they asked last. Older ones that do not fit end the search.
        if kept.is_empty() && left > 0 {
            kept.push(clip_item(item, bytes_for_tokens(left)));
        }
        break;
    }
    kept.reverse();
    kept
}

/// The newest part of `history` that fits `budget_tokens`, each text clipped to a quarter of
/// the budget first; `None` when not even the newest item fits (an empty history gives an empty
/// input). A tool output whose call was cut off is dropped too, since providers refuse an output
/// without its call.
pub fn summarization_input(
    history: &[ResponseItem],
    budget_tokens: i64,
) -> Option<Vec<ResponseItem>> {
    let item_bytes = bytes_for_tokens(budget_tokens / 4);
    let clipped: Vec<ResponseItem> = history
        .iter()
        .map(|item| clip_item(item, item_bytes))
        .collect();
    let mut start = clipped.len();
    let mut used = 0i64;
    while start > 0 {
        let cost = estimate_items(&clipped[start - 1..start]);
        if used + cost > budget_tokens {
            break;
        }
        used += cost;
        start -= 1;
    }
    let mut input: Vec<ResponseItem> = clipped.into_iter().skip(start).collect();
    while input.first().is_some_and(is_tool_output) {
        input.remove(0);
    }
    // An empty history has nothing to leave out; a non-empty one of which nothing fits does.
    (history.is_empty() || !input.is_empty()).then_some(input)
}

fn is_tool_output(item: &ResponseItem) -> bool {
    matches!(
        item,
        ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. }
    )
}

fn bytes_for_tokens(tokens: i64) -> usize {
    usize::try_from(tokens.max(0))
        .unwrap_or(usize::MAX)
        .saturating_mul(4)
}

/// `item` with every text longer than `max_bytes` cut to its head and tail.
fn clip_item(item: &ResponseItem, max_bytes: usize) -> ResponseItem {
    let mut item = item.clone();
    match &mut item {
        ResponseItem::Message { content, .. } => {
            for piece in content.iter_mut() {
                if let ContentItem::InputText { text } | ContentItem::OutputText { text } = piece {
                    clip_text(text, max_bytes);
                }
            }
        }
        ResponseItem::FunctionCallOutput {
            output: FunctionCallOutputBody::Text(output),
            ..
        }
        | ResponseItem::CustomToolCallOutput { output, .. } => clip_text(output, max_bytes),
        // Call arguments must stay parseable for the provider: a call too large for the budget
        // is left whole, and the budget check leaves it out instead.
        _ => {}
    }
    item
}

/// Keeps the first and last halves of `text` that fit in `max_bytes`, on char boundaries.
fn clip_text(text: &mut String, max_bytes: usize) {
    if text.len() <= max_bytes {
        return;
    }
    let keep = max_bytes.saturating_sub(CLIPPED_MARKER.len()) / 2;
    let mut head_end = keep.min(text.len());
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len().saturating_sub(keep);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    *text = format!(
        "{}{CLIPPED_MARKER}{}",
        &text[..head_end],
        &text[tail_start..]
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(text: &str) -> ResponseItem {
        ResponseItem::Message {
            id: None,
            role: "assistant".into(),
            content: vec![ContentItem::OutputText { text: text.into() }],
            phase: None,
        }
    }

    fn environment() -> ResponseItem {
        context::context_message(vec![
            "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>".into(),
        ])
    }

    #[test]
    fn a_compacted_history_keeps_context_and_user_messages_and_ends_with_the_summary() {
        let history = vec![
            environment(),
            ResponseItem::user_text("first"),
            assistant("answer"),
            ResponseItem::FunctionCall {
                id: None,
                call_id: "c".into(),
                name: "shell".into(),
                namespace: None,
                arguments: "{}".into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c".into(),
                output: "out".into(),
            },
            prompt::summary_message("old summary"),
            ResponseItem::user_text(prompt::TURN_ABORTED_NOTE),
            ResponseItem::user_text("second"),
        ];
        let replaced =
            replacement_history(&history, "new summary", KeptBudget { max_tokens: 1000 });
        assert_eq!(
            replaced,
            vec![
                environment(),
                ResponseItem::user_text("first"),
                ResponseItem::user_text("second"),
                prompt::summary_message("new summary"),
            ]
        );
    }

    #[test]
    fn kept_user_messages_stay_within_the_budget_newest_first() {
        let history: Vec<ResponseItem> = (0..50)
            .map(|n| ResponseItem::user_text(format!("message {n} {}", "x".repeat(400))))
            .collect();
        let budget = KeptBudget { max_tokens: 500 };
        let kept = kept_user_messages(&history, budget);
        assert!(estimate_items(&kept) <= 500);
        assert!(!kept.is_empty());
        assert_eq!(kept.last(), history.last());
        // One huge newest message is cut to the budget rather than dropped.
        let huge = vec![ResponseItem::user_text("y".repeat(100_000))];
        let kept = kept_user_messages(&huge, budget);
        assert_eq!(kept.len(), 1);
        assert!(estimate_items(&kept) <= 520, "{}", estimate_items(&kept));
    }

    #[test]
    fn the_summarization_input_fits_its_budget_and_never_starts_with_an_orphan_output() {
        let mut history = Vec::new();
        for n in 0..40 {
            history.push(ResponseItem::FunctionCall {
                id: None,
                call_id: format!("c{n}"),
                name: "shell".into(),
                namespace: None,
                arguments: "{}".into(),
            });
            history.push(ResponseItem::FunctionCallOutput {
                call_id: format!("c{n}"),
                output: "z".repeat(2_000 + n * 37).into(),
            });
        }
        let input = summarization_input(&history, 3_000).expect("no input");
        assert!(estimate_items(&input) <= 3_000);
        assert!(!is_tool_output(&input[0]));
        assert_eq!(
            input.last(),
            history.last().map(|item| clip_item(item, 3_000)).as_ref()
        );
        assert_eq!(summarization_input(&history, 0), None);
        assert_eq!(summarization_input(&[], 0), Some(Vec::new()));
    }
}
