//! Stream parsers for assistant text, one per agent-message item: hidden citation markup
//! (`<oai-mem-citation>…</oai-mem-citation>`) leaves the visible text and is extracted; in plan
//! mode, `<proposed_plan>` blocks become plan segments. Both keep their state across deltas (and
//! across the text seeded from `output_item.added`), so a tag split between two pieces is still
//! recognised. `finish()` releases whatever is held back; it is called exactly once per item.
//!
//! This module is pure text: it knows nothing of events, items or turns.

pub(crate) mod citation;
mod tags;

use tags::{TagEvent, TagScanner};

const CITATION_OPEN: &str = "<oai-mem-citation>";
const CITATION_CLOSE: &str = "</oai-mem-citation>";
const PLAN_OPEN: &str = "<proposed_plan>";
const PLAN_CLOSE: &str = "</proposed_plan>";

/// A piece of plan-mode output, in stream order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PlanSegment {
    Normal(String),
    PlanStart,
    PlanDelta(String),
    PlanEnd,
}

/// What one push (or the finish) of assistant text produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TextChunk {
    /// Text the user sees: citations removed and, in plan mode, plan blocks removed.
    pub visible: String,
    /// Completed citation payloads.
    pub citations: Vec<String>,
    /// Plan mode only: normal text and plan pieces in order.
    pub plan_segments: Vec<PlanSegment>,
}

impl TextChunk {
    pub(crate) fn is_empty(&self) -> bool {
        self.visible.is_empty() && self.citations.is_empty() && self.plan_segments.is_empty()
    }
}

/// The parser for one agent message's text.
#[derive(Debug, Clone)]
pub(crate) struct AssistantTextParser {
    citations: TagScanner,
    citation: String,
    plan: Option<PlanParser>,
    finished: bool,
}

impl AssistantTextParser {
    pub(crate) fn new(plan_mode: bool) -> AssistantTextParser {
        AssistantTextParser {
            citations: TagScanner::new(CITATION_OPEN, CITATION_CLOSE),
            citation: String::new(),
            plan: plan_mode.then(PlanParser::new),
            finished: false,
        }
    }

    pub(crate) fn push(&mut self, text: &str) -> TextChunk {
        if self.plan.is_none() && self.citations.passes_through(text) {
            // The common delta: no markup can start in it, so it is visible as it is (one
            // allocation instead of an event list and its text).
            return TextChunk {
                visible: text.to_string(),
                ..TextChunk::default()
            };
        }
        let events = self.citations.push(text);
        self.consume(events, false)
    }

    /// [`AssistantTextParser::push`] of a delta the caller owns: in the common case the delta
    /// itself becomes the visible text, with no copy.
    pub(crate) fn push_owned(&mut self, text: String) -> TextChunk {
        if self.plan.is_none() && self.citations.passes_through(&text) {
            return TextChunk {
                visible: text,
                ..TextChunk::default()
            };
        }
        let events = self.citations.push(&text);
        self.consume(events, false)
    }

    /// Releases held-back text. A second call returns nothing.
    pub(crate) fn finish(&mut self) -> TextChunk {
        if self.finished {
            return TextChunk::default();
        }
        self.finished = true;
        let events = self.citations.finish();
        self.consume(events, true)
    }

    fn consume(&mut self, events: Vec<TagEvent>, finishing: bool) -> TextChunk {
        let mut visible = String::new();
        let mut out = TextChunk::default();
        for event in events {
            match event {
                TagEvent::Outside(text) if visible.is_empty() => visible = text,
                TagEvent::Outside(text) => visible.push_str(&text),
                TagEvent::Open => self.citation.clear(),
                TagEvent::Inside(text) => self.citation.push_str(&text),
                TagEvent::Close => out.citations.push(std::mem::take(&mut self.citation)),
            }
        }
        match &mut self.plan {
            None => out.visible = visible,
            Some(plan) => {
                let mut segments = plan.push(&visible);
                if finishing {
                    segments.extend(plan.finish());
                }
                out.visible = segments
                    .iter()
                    .filter_map(|segment| match segment {
                        PlanSegment::Normal(text) => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                out.plan_segments = segments;
            }
        }
        out
    }
}

/// Splits visible text into normal and proposed-plan segments. The line break right after an
/// opening or closing tag belongs to the markup, not to either text.
#[derive(Debug, Clone)]
struct PlanParser {
    scanner: TagScanner,
    strip_newline: bool,
}

impl PlanParser {
    fn new() -> PlanParser {
        PlanParser {
            scanner: TagScanner::new(PLAN_OPEN, PLAN_CLOSE),
            strip_newline: false,
        }
    }

    fn push(&mut self, text: &str) -> Vec<PlanSegment> {
        let events = self.scanner.push(text);
        self.segments(events)
    }

    fn finish(&mut self) -> Vec<PlanSegment> {
        let events = self.scanner.finish();
        self.segments(events)
    }

    fn segments(&mut self, events: Vec<TagEvent>) -> Vec<PlanSegment> {
        let mut out = Vec::new();
        for event in events {
            match event {
                TagEvent::Outside(text) => {
                    let text = self.strip(text);
                    if !text.is_empty() {
                        out.push(PlanSegment::Normal(text));
                    }
                }
                TagEvent::Inside(text) => {
                    let text = self.strip(text);
                    if !text.is_empty() {
                        out.push(PlanSegment::PlanDelta(text));
                    }
                }
                TagEvent::Open => {
                    self.strip_newline = true;
                    out.push(PlanSegment::PlanStart);
                }
                TagEvent::Close => {
                    self.strip_newline = true;
                    out.push(PlanSegment::PlanEnd);
                }
            }
        }
        out
    }

    fn strip(&mut self, text: String) -> String {
        if !self.strip_newline || text.is_empty() {
            return text;
        }
        self.strip_newline = false;
        match text.strip_prefix('\n') {
            Some(rest) => rest.to_string(),
            None => text,
        }
    }
}

/// The hidden citation payloads of a complete message.
pub(crate) fn citations_in(text: &str) -> Vec<String> {
    let mut parser = AssistantTextParser::new(false);
    let mut citations = parser.push(text).citations;
    citations.extend(parser.finish().citations);
    citations
}

/// The visible text and the plan text of a complete message, parsed in one go.
pub(crate) fn split_complete_text(text: &str, plan_mode: bool) -> (String, Option<String>) {
    let mut parser = AssistantTextParser::new(plan_mode);
    let mut chunk = parser.push(text);
    let tail = parser.finish();
    chunk.visible.push_str(&tail.visible);
    chunk.plan_segments.extend(tail.plan_segments);
    let mut plan: Option<String> = None;
    for segment in &chunk.plan_segments {
        match segment {
            PlanSegment::PlanStart => {
                plan.get_or_insert_with(String::new);
            }
            PlanSegment::PlanDelta(delta) => plan.get_or_insert_with(String::new).push_str(delta),
            _ => {}
        }
    }
    (chunk.visible, plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_citations_across_seed_and_delta_boundaries() {
        let mut parser = AssistantTextParser::new(false);
        let seeded = parser.push("hello <oai-mem-");
        assert_eq!(seeded.visible, "hello ");
        assert!(seeded.citations.is_empty());
        let delta = parser.push("citation>doc-1</oai-mem-citation> world");
        assert_eq!(delta.visible, " world");
        assert_eq!(delta.citations, vec!["doc-1".to_string()]);
        assert_eq!(parser.finish(), TextChunk::default());
    }

    #[test]
    fn citation_split_at_every_byte_is_still_hidden() {
        let text = "a <oai-mem-citation>x</oai-mem-citation>b";
        for split in 1..text.len() {
            let mut parser = AssistantTextParser::new(false);
            let mut visible = parser.push(&text[..split]).visible;
            let second = parser.push(&text[split..]);
            visible.push_str(&second.visible);
            let tail = parser.finish();
            visible.push_str(&tail.visible);
            assert_eq!(visible, "a b", "split at {split}");
        }
    }

    #[test]
    fn assistant_message_stream_parsers_seed_plan_parser_across_added_and_delta_boundaries() {
        let mut parser = AssistantTextParser::new(true);
        let mut segments = parser.push("Intro\n<proposed").plan_segments;
        segments.extend(
            parser
                .push("_plan>\n- step\n</proposed_plan>\nOutro")
                .plan_segments,
        );
        segments.extend(parser.finish().plan_segments);
        assert_eq!(
            segments,
            vec![
                PlanSegment::Normal("Intro\n".into()),
                PlanSegment::PlanStart,
                PlanSegment::PlanDelta("- step\n".into()),
                PlanSegment::PlanEnd,
                PlanSegment::Normal("Outro".into()),
            ]
        );
    }

    #[test]
    fn finish_runs_once() {
        let mut parser = AssistantTextParser::new(false);
        assert_eq!(parser.push("tail <oai").visible, "tail ");
        assert_eq!(parser.finish().visible, "<oai");
        assert_eq!(parser.finish(), TextChunk::default());
    }

    #[test]
    fn complete_text_splits_into_message_and_plan() {
        let text = "Here is the plan.\n<proposed_plan>\n# Plan\n- step one\n</proposed_plan>\n";
        assert_eq!(
            split_complete_text(text, true),
            (
                "Here is the plan.\n".to_string(),
                Some("# Plan\n- step one\n".to_string())
            )
        );
        assert_eq!(split_complete_text(text, false), (text.to_string(), None));
    }
}
