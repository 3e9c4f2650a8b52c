//! The WebSocket decoder: the same events as SSE, a different ending policy.

use std::convert::Infallible;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};

use super::super::error::{ApiError, StreamError};
use super::super::event::ResponseEvent;
use super::super::request::{Reasoning, ResponsesRequest};
use super::super::websocket::{response_create_message, WebSocketEventStream, WebSocketMessage};
use super::{
    completed_event, completed_frame, expected_full_response, text_delta, text_delta_frame,
    transcript_events, IDLE, STEP,
};

fn message_of(event: &Value) -> WebSocketMessage {
    match event {
        Value::String(raw) => WebSocketMessage::Text(raw.clone()),
        other => WebSocketMessage::Text(other.to_string()),
    }
}

async fn decode_messages(
    messages: Vec<WebSocketMessage>,
) -> Vec<Result<ResponseEvent, StreamError>> {
    let messages = futures::stream::iter(messages.into_iter().map(Ok::<_, Infallible>));
    let mut stream = WebSocketEventStream::new(messages, IDLE);
    let mut events = Vec::new();
    for _ in 0..10_000 {
        match tokio::time::timeout(STEP, stream.next_event()).await {
            Ok(Some(event)) => events.push(event),
            Ok(None) => return events,
            Err(_) => panic!("decoder did not finish; got {events:?}"),
        }
    }
    panic!("decoder yielded too many events")
}

#[tokio::test]
async fn websocket_messages_of_the_transcript_decode_to_the_same_events_as_sse() {
    let mut messages: Vec<_> = transcript_events().iter().map(message_of).collect();
    messages.insert(3, WebSocketMessage::Other);
    assert_eq!(decode_messages(messages).await, expected_full_response());
}

#[tokio::test]
async fn a_provider_failure_ends_the_websocket_read_loop_at_once() {
    let failed = json!({"type": "response.failed", "response": {"error": {
        "code": "insufficient_quota", "message": "no credit"}}});
    let messages = [
        text_delta_frame("a"),
        failed,
        text_delta_frame("b"),
        completed_frame(),
    ]
    .iter()
    .map(message_of)
    .collect();
    assert_eq!(
        decode_messages(messages).await,
        vec![
            Ok(text_delta("a")),
            Err(StreamError::Api(ApiError::QuotaExceeded(
                "no credit".to_string()
            )))
        ]
    );
}

#[tokio::test]
async fn a_close_before_completed_is_an_error_and_completed_ends_without_close() {
    let closed = vec![message_of(&text_delta_frame("a")), WebSocketMessage::Close];
    assert_eq!(
        decode_messages(closed).await,
        vec![Ok(text_delta("a")), Err(StreamError::ClosedBeforeCompleted)]
    );
    let messages = futures::stream::iter([Ok::<_, Infallible>(message_of(&completed_frame()))])
        .chain(futures::stream::pending());
    let mut stream = WebSocketEventStream::new(messages, Duration::from_secs(3600));
    let first = tokio::time::timeout(STEP, stream.next_event()).await;
    assert_eq!(first, Ok(Some(Ok(completed_event()))));
    assert_eq!(
        tokio::time::timeout(STEP, stream.next_event()).await,
        Ok(None)
    );
}

#[tokio::test(start_paused = true)]
async fn websocket_idle_timeout_restarts_at_every_message() {
    let idle = Duration::from_secs(10);
    let messages = futures::stream::iter(0..5)
        .then(|i| async move {
            tokio::time::sleep(Duration::from_secs(9)).await;
            Ok::<_, Infallible>(message_of(&text_delta_frame(&i.to_string())))
        })
        .chain(futures::stream::pending());
    let mut stream = WebSocketEventStream::new(Box::pin(messages), idle);
    for i in 0..5 {
        assert_eq!(
            stream.next_event().await,
            Some(Ok(text_delta(&i.to_string())))
        );
    }
    assert_eq!(
        stream.next_event().await,
        Some(Err(StreamError::IdleTimeout(idle)))
    );
}

#[test]
fn response_create_carries_the_request_fields_at_top_level() {
    let request = ResponsesRequest {
        model: "gpt-5".to_string(),
        instructions: "be brief".to_string(),
        input: vec![super::ResponseItem::user_text("hi")],
        tools: vec![],
        tool_choice: "auto",
        parallel_tool_calls: true,
        reasoning: Some(Reasoning {
            effort: Some("low".to_string()),
            summary: None,
        }),
        store: false,
        stream: true,
        include: vec![],
        prompt_cache_key: Some("thread_1".to_string()),
        text: None,
        service_tier: None,
    };
    let message: Value = serde_json::from_str(&response_create_message(&request).unwrap()).unwrap();
    assert_eq!(message["type"], "response.create");
    assert_eq!(message["model"], "gpt-5");
    assert_eq!(message["input"][0]["content"][0]["text"], "hi");
    assert_eq!(message["reasoning"], json!({"effort": "low"}));
    assert_eq!(message["prompt_cache_key"], "thread_1");
}

#[tokio::test]
async fn a_websocket_failure_with_usage_yields_the_usage_then_ends() {
    let failed = json!({"type": "response.failed", "response": {"error": {
        "code": "server_error", "message": "boom"},
        "usage": {"input_tokens": 9, "output_tokens": 1, "total_tokens": 10}}});
    let messages = [failed, text_delta_frame("never")]
        .iter()
        .map(message_of)
        .collect();
    let usage = super::super::event::TokenUsage {
        input_tokens: 9,
        output_tokens: 1,
        total_tokens: 10,
        ..Default::default()
    };
    assert_eq!(
        decode_messages(messages).await,
        vec![
            Ok(ResponseEvent::FailedUsage(usage)),
            Err(StreamError::Api(ApiError::Retryable {
                message: "boom".to_string(),
                delay: None
            })),
        ]
    );
}
