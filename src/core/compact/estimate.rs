//! Token estimates. A provider counts tokens with its own tokenizer, which openturn does not
//! ship; what matters for compaction is a bound that errs on the large side. Four bytes of the
//! JSON the request carries count as one token: English text and JSON run at three to four
//! bytes a token, so real counts come out at or under the estimate for the text that fills
//! long threads (code, logs, prose).

use crate::wire::{ContentItem, FunctionCallOutputBody, ResponseItem, ResponsesRequest};

/// Bytes counted as one token.
const BYTES_PER_TOKEN: usize = 4;

/// Tokens one inlined image is counted as, whatever its encoded size: a provider charges an
/// image by its tiles (well under this for the 2048-pixel images openturn sends), not by the
/// bytes of its data URL, which would count a photo as hundreds of thousands of tokens and
/// compact the thread for nothing.
const TOKENS_PER_IMAGE: i64 = 1_000;

/// Tokens `bytes` bytes are estimated to take, rounded up.
pub fn tokens_for_bytes(bytes: usize) -> i64 {
    i64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(i64::MAX)
}

/// The estimated tokens of `items` as the request's `input` carries them.
pub fn estimate_items(items: &[ResponseItem]) -> i64 {
    let mut images = 0;
    let mut image_bytes = 0;
    for part in items.iter().flat_map(image_parts) {
        if let ContentItem::InputImage { image_url, .. } = part {
            images += 1;
            image_bytes += image_url.len();
        }
    }
    let bytes: usize = items
        .iter()
        .map(|item| {
            serde_json::to_string(item)
                .map(|text| text.len())
                .unwrap_or(0)
        })
        .sum();
    tokens_for_bytes(bytes.saturating_sub(image_bytes)) + images * TOKENS_PER_IMAGE
}

/// The content parts of `item` that may hold an image.
fn image_parts(item: &ResponseItem) -> &[ContentItem] {
    match item {
        ResponseItem::Message { content, .. } => content,
        ResponseItem::FunctionCallOutput {
            output: FunctionCallOutputBody::Content(content),
            ..
        } => content,
        _ => &[],
    }
}

/// The estimated tokens of the items after the last one the model produced: what a provider's
/// count for its last response does not include yet (tool outputs, the user's next message,
/// context the turn loop added). Reading it from the history's shape, not from a length kept
/// aside, gives the same answer live and after a resume.
pub fn estimate_since_last_output(history: &[ResponseItem]) -> i64 {
    let start = history
        .iter()
        .rposition(is_model_output)
        .map_or(0, |index| index + 1);
    estimate_items(&history[start..])
}

/// Whether the model produced `item` (anything but input: user, developer or system messages
/// and tool outputs).
fn is_model_output(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Message { role, .. } => role == "assistant",
        ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. } => {
            false
        }
        _ => true,
    }
}

/// The estimated tokens of a whole request: instructions, input and tool definitions — what
/// the provider counts as the request's input.
pub fn estimate_request(request: &ResponsesRequest) -> i64 {
    let tools: usize = request
        .tools
        .iter()
        .map(|tool| {
            serde_json::to_string(tool)
                .map(|text| text.len())
                .unwrap_or(0)
        })
        .sum();
    tokens_for_bytes(request.instructions.len() + tools)
        .saturating_add(estimate_items(&request.input))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_grows_with_the_text_and_rounds_up() {
        assert_eq!(tokens_for_bytes(0), 0);
        assert_eq!(tokens_for_bytes(1), 1);
        assert_eq!(tokens_for_bytes(8), 2);
        let short = estimate_items(&[ResponseItem::user_text("hi")]);
        let long = estimate_items(&[ResponseItem::user_text("hi".repeat(400))]);
        assert!(short > 0 && long > short + 150, "{short} {long}");
    }

    #[test]
    fn an_image_counts_a_fixed_amount_whatever_its_encoded_size() {
        let image = |bytes: usize| ResponseItem::FunctionCallOutput {
            call_id: "c".into(),
            output: FunctionCallOutputBody::Content(vec![ContentItem::InputImage {
                image_url: format!("data:image/png;base64,{}", "A".repeat(bytes)),
                detail: Some("high".into()),
            }]),
        };
        let small = estimate_items(&[image(10)]);
        let large = estimate_items(&[image(3_000_000)]);
        assert_eq!(small, large);
        assert!(
            (TOKENS_PER_IMAGE..TOKENS_PER_IMAGE + 100).contains(&small),
            "{small}"
        );
    }

    #[test]
    fn what_came_after_the_models_last_item_is_what_the_estimate_adds() {
        let call = ResponseItem::FunctionCall {
            id: None,
            call_id: "c".into(),
            name: "shell".into(),
            namespace: None,
            arguments: "{}".into(),
        };
        let output = ResponseItem::FunctionCallOutput {
            call_id: "c".into(),
            output: "x".repeat(400).into(),
        };
        let question = ResponseItem::user_text("next");
        let history = vec![ResponseItem::user_text("first"), call, output.clone()];
        assert_eq!(
            estimate_since_last_output(&history),
            estimate_items(std::slice::from_ref(&output))
        );
        let mut later = history.clone();
        later.push(question.clone());
        assert_eq!(
            estimate_since_last_output(&later),
            estimate_items(&[output, question])
        );
        // Nothing from the model yet: all of it is new.
        let fresh = [ResponseItem::user_text("only")];
        assert_eq!(estimate_since_last_output(&fresh), estimate_items(&fresh));
    }
}
