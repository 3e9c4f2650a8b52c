//! The reviewer's answer as the client reads it. The reviewer is asked for one JSON object
//! (`guidelines.md`); its verdict's explanation, then each finding with its place, become the
//! text of the `exitedReviewMode` item and of the review's agent message. An answer that is not
//! such an object (or explains nothing) is shown as the reviewer wrote it.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct ReviewOutput {
    #[serde(default)]
    findings: Vec<Finding>,
    #[serde(default)]
    overall_explanation: String,
}

#[derive(Debug, Deserialize)]
struct Finding {
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: String,
    code_location: Option<CodeLocation>,
}

#[derive(Debug, Deserialize)]
struct CodeLocation {
    absolute_file_path: String,
    line_range: LineRange,
}

#[derive(Debug, Deserialize)]
struct LineRange {
    start: u64,
    end: u64,
}

/// What the client shows for the reviewer's final message `raw`.
pub fn render(raw: &str) -> String {
    let Some(output) = parse(raw) else {
        return shown_as_written(raw);
    };
    let explanation = output.overall_explanation.trim();
    if explanation.is_empty() {
        return shown_as_written(raw);
    }
    if output.findings.is_empty() {
        return explanation.to_string();
    }
    let findings: Vec<String> = output.findings.iter().map(finding_text).collect();
    format!(
        "{explanation}\n\nFull review comments:\n\n{}",
        findings.join("\n\n")
    )
}

/// The answer as one JSON object: the whole text, else the text from its first `{` to its last
/// `}` (a model may wrap the object in a sentence despite being told not to).
fn parse(raw: &str) -> Option<ReviewOutput> {
    if let Ok(output) = serde_json::from_str(raw.trim()) {
        return Some(output);
    }
    let (start, end) = (raw.find('{')?, raw.rfind('}')?);
    if end <= start {
        return None;
    }
    serde_json::from_str(&raw[start..=end]).ok()
}

fn shown_as_written(raw: &str) -> String {
    let raw = raw.trim();
    if raw.is_empty() {
        return "The reviewer gave no answer.".to_string();
    }
    raw.to_string()
}

/// `- title — path:start-end`, then the body indented under it.
fn finding_text(finding: &Finding) -> String {
    let mut head = format!("- {}", finding.title.trim());
    if let Some(location) = &finding.code_location {
        head.push_str(&format!(
            " \u{2014} {}:{}-{}",
            location.absolute_file_path, location.line_range.start, location.line_range.end
        ));
    }
    let body: Vec<String> = finding
        .body
        .trim()
        .lines()
        .map(|line| format!("  {line}"))
        .collect();
    if body.is_empty() {
        return head;
    }
    format!("{head}\n{}", body.join("\n"))
}

/// The user message the reviewed thread's history keeps after a review, ahead of the review's
/// text as the assistant's message: the model's later turns know a review ran and what it said.
pub(crate) fn history_note(review: &str) -> String {
    format!(
        "<review_result>\nThe user ran a code review of their changes. The reviewer's report \
         follows; the user may ask for some of its findings to be addressed.\n<report>\n\
         {review}\n</report>\n</review_result>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_follow_the_explanation_with_their_places() {
        let raw = r#"{"findings":[{"title":"[P1] Off by one","body":"Skips the last.\nAlways.","confidence_score":0.9,"priority":1,"code_location":{"absolute_file_path":"/r/a.rs","line_range":{"start":2,"end":3}}}],"overall_correctness":"patch is incorrect","overall_explanation":"A bug.","overall_confidence_score":0.8}"#;
        assert_eq!(
            render(raw),
            "A bug.\n\nFull review comments:\n\n- [P1] Off by one \u{2014} /r/a.rs:2-3\n  Skips the last.\n  Always."
        );
    }

    #[test]
    fn an_object_inside_prose_is_found_and_other_answers_are_shown_as_written() {
        let wrapped = "Here:\n{\"findings\":[],\"overall_explanation\":\"Fine.\"}\nthanks";
        assert_eq!(render(wrapped), "Fine.");
        assert_eq!(render(" plain words "), "plain words");
        let unexplained = r#"{"findings":[{"title":"T","body":"B"}],"overall_explanation":""}"#;
        assert_eq!(render(unexplained), unexplained);
    }
}
