//! The decoder and mapper tasks with an in-memory event source: ordering, the kept items, and
//! cancellation reaching the source when the consumer drops the stream.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a failing test should stop at the line that failed"
)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::wire::ResponseItem;

const STEP: Duration = Duration::from_secs(5);

/// Yields its events, then never ends; records how often it was polled and when it is dropped.
struct ScriptedSource {
    events: VecDeque<Result<ResponseEvent, StreamError>>,
    polls: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

impl ResponseEventSource for ScriptedSource {
    async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        match self.events.pop_front() {
            Some(event) => Some(event),
            None => std::future::pending().await,
        }
    }
}

impl Drop for ScriptedSource {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

struct Probe {
    polls: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

fn spawn(events: Vec<Result<ResponseEvent, StreamError>>) -> (ResponseStream, Probe) {
    let probe = Probe {
        polls: Arc::default(),
        dropped: Arc::default(),
    };
    let source = ScriptedSource {
        events: events.into(),
        polls: probe.polls.clone(),
        dropped: probe.dropped.clone(),
    };
    let header_events = vec![ResponseEvent::ServerModel("served".to_string())];
    let diagnostics = StreamDiagnostics {
        provider: "test".to_string(),
        request_id: Some("req_7".to_string()),
    };
    (
        ResponseStream::spawn(source, header_events, diagnostics),
        probe,
    )
}

async fn next(stream: &mut ResponseStream) -> Option<Result<ResponseEvent, StreamError>> {
    tokio::time::timeout(STEP, stream.next()).await.unwrap()
}

fn message(id: &str) -> ResponseItem {
    ResponseItem::Message {
        id: Some(id.to_string()),
        role: "assistant".to_string(),
        content: vec![],
        phase: None,
    }
}

#[tokio::test]
async fn header_events_come_first_and_the_mapper_keeps_the_completed_items() {
    let completed = ResponseEvent::Completed {
        response_id: "resp_1".to_string(),
        token_usage: None,
        end_turn: None,
    };
    let (mut stream, _probe) = spawn(vec![
        Ok(ResponseEvent::OutputItemAdded(message("a"))),
        Ok(ResponseEvent::OutputItemDone(message("a"))),
        Ok(ResponseEvent::OutputItemDone(message("b"))),
        Ok(completed.clone()),
    ]);
    assert_eq!(stream.request_id(), Some("req_7"));
    assert_eq!(
        stream.take_last_response(),
        None,
        "nothing before completed"
    );
    let mut events = Vec::new();
    for _ in 0..5 {
        events.push(next(&mut stream).await.unwrap().unwrap());
    }
    assert_eq!(events[0], ResponseEvent::ServerModel("served".to_string()));
    assert_eq!(events[4], completed);
    assert_eq!(
        stream.take_last_response(),
        Some(LastResponse {
            response_id: "resp_1".to_string(),
            items: vec![message("a"), message("b")],
        })
    );
}

#[tokio::test]
async fn an_error_reaches_the_consumer_unchanged() {
    let (mut stream, _probe) = spawn(vec![Err(StreamError::ClosedBeforeCompleted)]);
    assert!(matches!(
        next(&mut stream).await,
        Some(Ok(ResponseEvent::ServerModel(_)))
    ));
    assert_eq!(
        next(&mut stream).await,
        Some(Err(StreamError::ClosedBeforeCompleted))
    );
    assert_eq!(stream.take_last_response(), None);
}

#[tokio::test]
async fn dropping_the_stream_stops_polling_and_drops_the_source() {
    let (mut stream, probe) = spawn(vec![Ok(ResponseEvent::Created { response_id: None })]);
    assert!(next(&mut stream).await.is_some());
    assert!(next(&mut stream).await.is_some());
    assert!(!probe.dropped.load(Ordering::SeqCst));
    drop(stream);
    tokio::time::timeout(STEP, async {
        while !probe.dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("the source is dropped after the consumer goes away");
    let polls = probe.polls.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        probe.polls.load(Ordering::SeqCst),
        polls,
        "no polling after cancel"
    );
}

/// Backpressure: with a consumer that reads nothing, the tasks buffer at most the two channel
/// capacities and then stop pulling from the source.
#[tokio::test]
async fn a_consumer_that_stops_reading_stops_the_source_at_the_channel_bounds() {
    let many = (0..1000)
        .map(|i| {
            Ok(ResponseEvent::OutputTextDelta {
                item_id: "m".to_string(),
                delta: i.to_string(),
            })
        })
        .collect();
    let (stream, probe) = spawn(many);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let bound = DECODED_CHANNEL_CAPACITY + EVENT_CHANNEL_CAPACITY + 3;
    assert!(probe.polls.load(Ordering::SeqCst) <= bound);
    drop(stream);
}
