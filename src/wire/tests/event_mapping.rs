//! What one frame means, tested through the pure `map_frame`.

use serde_json::json;

use super::super::error::{ApiError, StreamError};
use super::super::event::{ResponseEvent, TokenUsage};
use super::super::item::ResponseItem;
use super::super::map::{map_frame, FrameOutcome};

fn map(value: serde_json::Value) -> FrameOutcome {
    map_frame(&value.to_string())
}

#[test]
fn unknown_event_types_are_ignored() {
    for kind in [
        "response.in_progress",
        "response.output_text.done",
        "response.function_call_arguments.done",
        "response.some_future_event",
    ] {
        assert_eq!(
            map(json!({"type": kind, "item_id": "x", "delta": "d"})),
            FrameOutcome::Skip
        );
    }
}

#[test]
fn known_events_missing_required_fields_yield_no_event() {
    let frames = [
        json!({"type": "response.output_text.delta", "item_id": "msg_1"}),
        json!({"type": "response.output_text.delta", "delta": "no item id"}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs", "delta": "d"}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs"}),
        json!({"type": "response.reasoning_summary_text.done", "item_id": "rs", "summary_index": 0}),
        json!({"type": "response.reasoning_text.delta", "item_id": "rs", "delta": "d"}),
        json!({"type": "response.function_call_arguments.delta", "delta": "{"}),
        json!({"type": "response.custom_tool_call_input.delta", "delta": "no ids"}),
        json!({"type": "response.custom_tool_call_input.delta", "item_id": "ctc"}),
        json!({"type": "response.output_item.added"}),
        json!({"type": "response.output_item.done"}),
    ];
    for frame in frames {
        assert_eq!(map(frame.clone()), FrameOutcome::Skip, "{frame}");
    }
}

#[test]
fn items_that_do_not_parse_are_skipped() {
    let items = [
        json!({"type": "message", "id": "msg_1"}),
        json!({"type": "function_call", "call_id": "c"}),
        json!({"type": "custom_tool_call", "name": "n"}),
        json!({"id": "no_type"}),
        json!(42),
        json!("message"),
    ];
    for item in items {
        let frame = json!({"type": "response.output_item.done", "item": item});
        assert_eq!(map(frame.clone()), FrameOutcome::Skip, "{frame}");
    }
}

#[test]
fn unknown_item_types_are_kept_as_raw_json() {
    let item = json!({"type": "local_shell_call", "id": "ls_1", "action": {"command": ["ls"]}});
    let frame = json!({"type": "response.output_item.added", "item": item});
    assert_eq!(
        map(frame),
        FrameOutcome::Event(ResponseEvent::OutputItemAdded(ResponseItem::Other(item)))
    );
}

#[test]
fn frames_whose_data_is_not_json_are_skipped() {
    for data in [
        "[DONE]",
        "not json",
        "{\"type\":",
        "",
        "\u{1F600}",
        "[1,2]",
        "{}",
    ] {
        assert_eq!(map_frame(data), FrameOutcome::Skip, "{data:?}");
    }
}

#[test]
fn escaped_event_types_are_still_recognised() {
    let data = r#"{"type":"response.output_text\u002edelta","item_id":"m","delta":"\u00e9"}"#;
    assert_eq!(
        map_frame(data),
        FrameOutcome::Event(ResponseEvent::OutputTextDelta {
            item_id: "m".to_string(),
            delta: "é".to_string()
        })
    );
}

#[test]
fn completed_carries_response_id_usage_with_cached_and_reasoning_tokens_and_end_turn() {
    let frame = json!({"type": "response.completed", "response": {
        "id": "resp_9", "end_turn": true,
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
                  "output_tokens": 6, "output_tokens_details": {"reasoning_tokens": 2},
                  "total_tokens": 16}}});
    assert_eq!(
        map(frame),
        FrameOutcome::Event(ResponseEvent::Completed {
            response_id: "resp_9".to_string(),
            token_usage: Some(TokenUsage {
                input_tokens: 10,
                cached_input_tokens: 4,
                output_tokens: 6,
                reasoning_output_tokens: 2,
                total_tokens: 16,
            }),
            end_turn: Some(true),
        })
    );
    let bare = json!({"type": "response.completed", "response": {"id": "resp_9"}});
    assert_eq!(
        map(bare),
        FrameOutcome::Event(ResponseEvent::Completed {
            response_id: "resp_9".to_string(),
            token_usage: None,
            end_turn: None,
        })
    );
}

#[test]
fn completed_whose_payload_does_not_parse_is_a_stream_error() {
    let frames = [
        json!({"type": "response.completed"}),
        json!({"type": "response.completed", "response": {"usage": null}}),
        json!({"type": "response.completed", "response": {"id": 5}}),
        json!({"type": "response.completed", "response": {"id": "r", "usage": {"input_tokens": "many"}}}),
        json!({"type": "response.completed", "response": "done"}),
    ];
    for frame in frames {
        assert!(
            matches!(
                map(frame.clone()),
                FrameOutcome::Fatal(StreamError::BadCompleted(_))
            ),
            "{frame}"
        );
    }
}

#[test]
fn failed_incomplete_and_error_events_are_classified_for_saving() {
    let failed = json!({"type": "response.failed", "response": {"id": "r", "error": {
        "code": "rate_limit_exceeded", "message": "Rate limit reached. Please try again in 11.054s."}}});
    assert_eq!(
        map(failed),
        FrameOutcome::SaveError {
            error: ApiError::RateLimited {
                message: "Rate limit reached. Please try again in 11.054s.".to_string(),
                delay: Some(std::time::Duration::from_millis(11_054)),
            },
            usage: None,
        }
    );
    let incomplete = json!({"type": "response.incomplete", "response": {
        "incomplete_details": {"reason": "max_output_tokens"}}});
    assert_eq!(
        map(incomplete),
        FrameOutcome::SaveError {
            error: ApiError::Incomplete(
                "incomplete response returned, reason: max_output_tokens".to_string()
            ),
            usage: None,
        }
    );
    let flat_error =
        json!({"type": "error", "code": "context_length_exceeded", "message": "too long"});
    assert_eq!(
        map(flat_error),
        FrameOutcome::SaveError {
            error: ApiError::ContextWindowExceeded("too long".to_string()),
            usage: None,
        }
    );
    let nested_error = json!({"type": "error", "error": {"code": "slow_down", "message": "easy"}});
    assert_eq!(
        map(nested_error),
        FrameOutcome::SaveError {
            error: ApiError::RateLimited {
                message: "easy".to_string(),
                delay: None,
            },
            usage: None,
        }
    );
    let bare_failed = json!({"type": "response.failed", "response": {"id": "r"}});
    assert_eq!(
        map(bare_failed),
        FrameOutcome::SaveError {
            error: ApiError::Retryable {
                message: "response.failed event received".to_string(),
                delay: None,
            },
            usage: None,
        }
    );
}

#[test]
fn a_failed_or_incomplete_response_keeps_the_usage_it_reported() {
    let usage = json!({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 20},
        "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 7}, "total_tokens": 130});
    let counted = Some(TokenUsage {
        input_tokens: 100,
        cached_input_tokens: 20,
        output_tokens: 30,
        reasoning_output_tokens: 7,
        total_tokens: 130,
    });
    let failed = json!({"type": "response.failed", "response": {"id": "r", "usage": usage,
        "error": {"code": "server_error", "message": "boom"}}});
    assert_eq!(
        map(failed),
        FrameOutcome::SaveError {
            error: ApiError::Retryable {
                message: "boom".to_string(),
                delay: None
            },
            usage: counted,
        }
    );
    let incomplete = json!({"type": "response.incomplete", "response": {"usage": usage,
        "incomplete_details": {"reason": "max_output_tokens"}}});
    assert!(matches!(
        map(incomplete),
        FrameOutcome::SaveError { usage, .. } if usage == counted
    ));
    // A usage of an unexpected shape costs only the usage, not the classification.
    let odd = json!({"type": "response.failed", "response": {"usage": {"input_tokens": "many"},
        "error": {"code": "context_length_exceeded", "message": "too long"}}});
    assert_eq!(
        map(odd),
        FrameOutcome::SaveError {
            error: ApiError::ContextWindowExceeded("too long".to_string()),
            usage: None,
        }
    );
}
