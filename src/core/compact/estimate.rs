//! Token estimates. A provider counts tokens with its own tokenizer, which openturn does not
//! ship; what matters for compaction is a bound that errs on the large side. Four bytes of the
//! JSON the request carries count as one token: English text and JSON run at three to four
//! bytes a token, so real counts come out at or under the estimate for the text that fills
//! long threads (code, logs, prose).

use crate::wire::{ResponseItem, ResponsesRequest};

/// Bytes counted as one token.
const BYTES_PER_TOKEN: usize = 4;

/// Tokens `bytes` bytes are estimated to take, rounded up.
pub fn tokens_for_bytes(bytes: usize) -> i64 {
    i64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(i64::MAX)
}

/// The estimated tokens of `items` as the request's `input` carries them.
pub fn estimate_items(items: &[ResponseItem]) -> i64 {
    let bytes: usize = items
        .iter()
        .map(|item| {
            serde_json::to_string(item)
                .map(|text| text.len())
                .unwrap_or(0)
        })
        .sum();
    tokens_for_bytes(bytes)
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
}
