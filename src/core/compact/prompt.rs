//! The texts compaction gives the model: the request for a summary (replaceable with
//! `compact_prompt` in config.toml) and the heading the summary carries in the compacted
//! history, by which a later compaction also recognises an earlier summary.

use crate::wire::item::ContentItem;
use crate::wire::ResponseItem;

/// Appended, as a user message, to the history sent for summarization.
pub const DEFAULT_COMPACT_PROMPT: &str = "\
Stop working on the task for a moment: the conversation above is about to be replaced by a \
summary you write now, because it no longer fits in the model's context. Whoever continues \
will see only the user's own messages and your summary, not the tool calls, their outputs \
or your earlier replies.

Write the summary as a hand-over note to yourself. Cover:
- what the user asked for, including constraints and preferences they stated;
- what has been done so far: files read or changed (with paths), commands run and what \
they showed, decisions taken and why;
- what is still open: the next concrete steps, unanswered questions, known failures;
- facts that would be expensive to find again (names, versions, error messages, numbers).

Be specific and brief. Do not call tools. Reply with the summary only.";

/// The first line of the user message that carries a summary in a compacted history.
pub const SUMMARY_HEADING: &str = "<compaction_summary>";

/// Closes the summary message.
const SUMMARY_CLOSING: &str = "</compaction_summary>";

/// Tells the model what the summary is, ahead of it.
const SUMMARY_PREAMBLE: &str = "The earlier part of this conversation was compacted. The \
user's own messages above are kept; everything else was replaced by the summary below, \
written at that point by the model working on the task. Continue from it without redoing \
finished work.";

/// The user message that carries `summary` in a compacted history.
pub fn summary_message(summary: &str) -> ResponseItem {
    ResponseItem::user_text(format!(
        "{SUMMARY_HEADING}\n{SUMMARY_PREAMBLE}\n\n{}\n{SUMMARY_CLOSING}",
        summary.trim()
    ))
}

/// Whether `item` is a summary message an earlier compaction left.
pub fn is_summary_message(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Message { role, content, .. } if role == "user" => content.iter().any(
            |piece| matches!(piece, ContentItem::InputText { text } if text.starts_with(SUMMARY_HEADING)),
        ),
        _ => false,
    }
}

/// The user message asking for the summary.
pub fn summarization_request_message(prompt: Option<&str>) -> ResponseItem {
    ResponseItem::user_text(prompt.unwrap_or(DEFAULT_COMPACT_PROMPT))
}

/// Recorded in history after an interrupted turn, so the model does not believe it finished.
pub const TURN_ABORTED_NOTE: &str = "<turn_aborted>The user interrupted the previous turn before \
it finished; anything it was doing may be incomplete.</turn_aborted>";

/// Whether `item` is the note [`TURN_ABORTED_NOTE`].
pub fn is_turn_aborted_note(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Message { role, content, .. } if role == "user" => {
            matches!(content.as_slice(), [ContentItem::InputText { text }] if text == TURN_ABORTED_NOTE)
        }
        _ => false,
    }
}
