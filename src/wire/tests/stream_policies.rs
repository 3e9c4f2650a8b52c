//! When an SSE stream ends, and with what.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::json;

use super::super::error::{ApiError, StreamError};
use super::super::event::{ResponseEvent, TokenUsage};
use super::super::sse::SseEventStream;
use super::{
    collect, completed_event, completed_frame, decode_chunks, render_sse, sse_of, text_delta,
    text_delta_frame, LF, STEP,
};

fn failed_frame(code: &str, message: &str) -> serde_json::Value {
    json!({"type": "response.failed", "response": {"id": "resp_1",
        "error": {"code": code, "message": message}}})
}

#[tokio::test]
async fn skipped_frames_do_not_end_the_stream() {
    let mut bytes = b"data: [DONE]\n\ndata: not json\n\n: comment\n\n".to_vec();
    bytes.extend(render_sse(
        &[
            json!({"type": "response.unknown"}),
            text_delta_frame("a"),
            json!({"type": "response.output_item.done", "item": {"type": "message"}}),
            completed_frame(),
        ],
        LF,
    ));
    let events = decode_chunks(vec![Bytes::from(bytes)]).await;
    assert_eq!(events, vec![Ok(text_delta("a")), Ok(completed_event())]);
}

#[tokio::test]
async fn eof_without_completed_is_stream_closed_before_response_completed() {
    let events = decode_chunks(sse_of(&[text_delta_frame("partial")])).await;
    assert_eq!(
        events,
        vec![
            Ok(text_delta("partial")),
            Err(StreamError::ClosedBeforeCompleted)
        ]
    );
    assert_eq!(
        StreamError::ClosedBeforeCompleted.to_string(),
        "stream closed before response.completed"
    );
}

#[tokio::test]
async fn a_failed_response_is_saved_until_eof_and_events_after_it_still_arrive() {
    let frames = [
        failed_frame(
            "rate_limit_exceeded",
            "Rate limit. Please try again in 11.054s.",
        ),
        text_delta_frame("late"),
    ];
    let events = decode_chunks(sse_of(&frames)).await;
    let saved = ApiError::RateLimited {
        message: "Rate limit. Please try again in 11.054s.".to_string(),
        delay: Some(Duration::from_millis(11_054)),
    };
    assert_eq!(
        events,
        vec![Ok(text_delta("late")), Err(StreamError::Api(saved))]
    );
}

#[tokio::test]
async fn a_completed_after_a_saved_failure_still_wins() {
    let frames = [
        failed_frame("server_is_overloaded", "busy"),
        json!({"type": "response.incomplete", "response": {}}),
        completed_frame(),
    ];
    assert_eq!(
        decode_chunks(sse_of(&frames)).await,
        vec![Ok(completed_event())]
    );
}

fn failed_frame_with_usage(total: i64) -> serde_json::Value {
    json!({"type": "response.failed", "response": {"id": "resp_1",
        "error": {"code": "server_error", "message": "boom"},
        "usage": {"input_tokens": total, "output_tokens": 0, "total_tokens": total}}})
}

fn usage_of(total: i64) -> TokenUsage {
    TokenUsage {
        input_tokens: total,
        total_tokens: total,
        ..TokenUsage::default()
    }
}

#[tokio::test]
async fn a_saved_failures_usage_arrives_at_eof_just_before_the_failure() {
    let frames = [failed_frame_with_usage(42), text_delta_frame("late")];
    let boom = ApiError::Retryable {
        message: "boom".to_string(),
        delay: None,
    };
    assert_eq!(
        decode_chunks(sse_of(&frames)).await,
        vec![
            Ok(text_delta("late")),
            Ok(ResponseEvent::FailedUsage(usage_of(42))),
            Err(StreamError::Api(boom)),
        ]
    );
}

#[tokio::test]
async fn a_completed_after_a_failure_with_usage_is_the_only_usage() {
    let frames = [failed_frame_with_usage(42), completed_frame()];
    assert_eq!(
        decode_chunks(sse_of(&frames)).await,
        vec![Ok(completed_event())]
    );
    // A later failure without usage replaces the earlier one, usage and all.
    let frames = [
        failed_frame_with_usage(42),
        failed_frame("server_is_overloaded", "busy"),
    ];
    assert_eq!(
        decode_chunks(sse_of(&frames)).await,
        vec![Err(StreamError::Api(ApiError::ServerOverloaded(
            "busy".to_string()
        )))]
    );
}

#[tokio::test]
async fn the_last_saved_failure_is_the_one_reported_at_eof() {
    let frames = [
        failed_frame("server_is_overloaded", "busy"),
        json!({"type": "error", "code": "context_length_exceeded", "message": "too long"}),
    ];
    assert_eq!(
        decode_chunks(sse_of(&frames)).await,
        vec![Err(StreamError::Api(ApiError::ContextWindowExceeded(
            "too long".to_string()
        )))]
    );
}

#[tokio::test]
async fn a_completed_that_does_not_parse_ends_the_stream_with_an_error() {
    let frames = [
        json!({"type": "response.completed", "response": {"usage": {}}}),
        text_delta_frame("never seen"),
        completed_frame(),
    ];
    let events = decode_chunks(sse_of(&frames)).await;
    assert_eq!(events.len(), 1);
    assert!(matches!(events[0], Err(StreamError::BadCompleted(_))));
}

#[tokio::test]
async fn a_transport_error_ends_the_stream() {
    let good = Bytes::from(render_sse(&[text_delta_frame("a")], LF));
    let after = Bytes::from(render_sse(&[completed_frame()], LF));
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(good),
        Err(std::io::Error::other("connection reset")),
        Ok(after),
    ];
    let events = collect(SseEventStream::new(
        futures::stream::iter(chunks),
        Duration::from_secs(60),
    ))
    .await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[0], Ok(text_delta("a")));
    let Err(StreamError::Transport(message)) = &events[1] else {
        panic!("expected a transport error, got {:?}", events[1]);
    };
    assert!(message.contains("connection reset"), "{message}");
}

#[tokio::test]
async fn completed_ends_the_stream_without_waiting_for_eof() {
    let bytes = Bytes::from(render_sse(&[text_delta_frame("a"), completed_frame()], LF));
    let never_ending = futures::stream::iter([Ok::<Bytes, std::io::Error>(bytes)])
        .chain(futures::stream::pending());
    let mut stream = SseEventStream::new(never_ending, Duration::from_secs(3600));
    let events = collect_within(&mut stream, 2).await;
    assert_eq!(events, vec![Ok(text_delta("a")), Ok(completed_event())]);
    let after = tokio::time::timeout(STEP, stream.next_event()).await;
    assert_eq!(after, Ok(None), "nothing is read after completed");
}

async fn collect_within<S>(
    stream: &mut SseEventStream<S>,
    n: usize,
) -> Vec<Result<super::ResponseEvent, StreamError>>
where
    S: futures::Stream<Item = Result<Bytes, std::io::Error>> + Unpin,
{
    let mut events = Vec::new();
    for _ in 0..n {
        let next = tokio::time::timeout(STEP, stream.next_event()).await;
        events.push(next.expect("event in time").expect("stream not ended"));
    }
    events
}

/// Frames arrive every `gap`, then the stream falls silent (but stays open).
fn paced_frames(
    count: usize,
    gap: Duration,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Unpin {
    let frames = futures::stream::iter(0..count).then(move |i| async move {
        tokio::time::sleep(gap).await;
        Ok(Bytes::from(render_sse(
            &[text_delta_frame(&i.to_string())],
            LF,
        )))
    });
    Box::pin(frames.chain(futures::stream::pending()))
}

#[tokio::test(start_paused = true)]
async fn idle_timeout_restarts_at_every_frame_so_a_lively_stream_never_times_out() {
    let idle = Duration::from_secs(10);
    // 30 frames 9s apart: 270s in total, far beyond the idle limit, never 10s of silence.
    let mut stream = SseEventStream::new(paced_frames(30, Duration::from_secs(9)), idle);
    let started = tokio::time::Instant::now();
    for i in 0..30 {
        let next = stream.next_event().await;
        assert_eq!(next, Some(Ok(text_delta(&i.to_string()))));
    }
    assert!(started.elapsed() >= Duration::from_secs(270));
    assert_eq!(
        stream.next_event().await,
        Some(Err(StreamError::IdleTimeout(idle)))
    );
    assert_eq!(stream.next_event().await, None);
}

#[tokio::test(start_paused = true)]
async fn idle_timeout_fires_when_no_frame_arrives_within_it() {
    let idle = Duration::from_secs(10);
    let mut stream = SseEventStream::new(paced_frames(1, Duration::from_secs(11)), idle);
    assert_eq!(
        stream.next_event().await,
        Some(Err(StreamError::IdleTimeout(idle)))
    );
}

/// A line that never ends must not grow the buffer forever: past the cap the stream fails.
#[tokio::test]
async fn a_frame_growing_past_the_cap_ends_the_stream_with_an_error() {
    use super::super::sse_frame::MAX_FRAME_BYTES;
    const CHUNK: usize = 1024 * 1024;
    let mut chunks = vec![Bytes::from_static(b"data: ")];
    chunks.extend((0..=MAX_FRAME_BYTES / CHUNK).map(|_| Bytes::from(vec![b'x'; CHUNK])));
    // What follows the cap is never read: the stream has already failed.
    chunks.push(Bytes::from(render_sse(&[completed_frame()], LF)));
    let events = decode_chunks(chunks).await;
    assert_eq!(events.len(), 1, "one error, nothing else");
    match &events[0] {
        Err(StreamError::Transport(message)) => {
            assert!(message.contains("exceeded"), "{message}");
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
}
