//! `ResponseStream` over an in-memory event source: ordering, errors, cancellation reaching the
//! source when the consumer drops the stream, no read-ahead (bounded memory), and cancel-safety
//! of `next`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a failing test should stop at the line that failed"
)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::mpsc;

use super::*;
use crate::wire::ResponseItem;

/// Yields what its channel holds, and waits when it is empty (until the sender is dropped).
/// Counts the events taken from it and records when it is dropped.
struct ScriptedSource {
    events: mpsc::UnboundedReceiver<Result<ResponseEvent, StreamError>>,
    taken: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

impl ScriptedSource {
    fn took(
        &self,
        next: Option<Result<ResponseEvent, StreamError>>,
    ) -> Option<Result<ResponseEvent, StreamError>> {
        if next.is_some() {
            self.taken.fetch_add(1, Ordering::SeqCst);
        }
        next
    }
}

impl ResponseEventSource for ScriptedSource {
    async fn next_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        let next = self.events.recv().await;
        self.took(next)
    }

    fn next_buffered_event(&mut self) -> Option<Result<ResponseEvent, StreamError>> {
        let next = self.events.try_recv().ok();
        self.took(next)
    }
}

impl Drop for ScriptedSource {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

struct Probe {
    /// More events for the source; kept open so an exhausted source waits instead of ending.
    more: mpsc::UnboundedSender<Result<ResponseEvent, StreamError>>,
    taken: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

fn stream_over(events: Vec<Result<ResponseEvent, StreamError>>) -> (ResponseStream, Probe) {
    let (more, rx) = mpsc::unbounded_channel();
    for event in events {
        more.send(event).unwrap();
    }
    let probe = Probe {
        more,
        taken: Arc::default(),
        dropped: Arc::default(),
    };
    let source = ScriptedSource {
        events: rx,
        taken: probe.taken.clone(),
        dropped: probe.dropped.clone(),
    };
    let header_events = vec![ResponseEvent::ServerModel("served".to_string())];
    let diagnostics = StreamDiagnostics {
        provider: "test".to_string(),
        request_id: Some("req_7".to_string()),
    };
    (
        ResponseStream::new(source, header_events, diagnostics),
        probe,
    )
}

/// The next event, which the source must already hold: these tests never wait.
fn ready(stream: &mut ResponseStream) -> Option<Result<ResponseEvent, StreamError>> {
    stream
        .next()
        .now_or_never()
        .expect("the event was ready but next() waited")
}

fn message(id: &str) -> ResponseItem {
    ResponseItem::Message {
        id: Some(id.to_string()),
        role: "assistant".to_string(),
        content: vec![],
        phase: None,
    }
}

fn delta(i: usize) -> Result<ResponseEvent, StreamError> {
    Ok(ResponseEvent::OutputTextDelta {
        item_id: "m".to_string(),
        delta: i.to_string(),
    })
}

#[test]
fn header_events_come_first_then_the_decoded_events_in_order() {
    let completed = ResponseEvent::Completed {
        response_id: "resp_1".to_string(),
        token_usage: None,
        end_turn: None,
    };
    let decoded = [
        ResponseEvent::OutputItemAdded(message("a")),
        ResponseEvent::OutputItemDone(message("a")),
        ResponseEvent::OutputItemDone(message("b")),
        completed,
    ];
    let (mut stream, probe) = stream_over(decoded.iter().cloned().map(Ok).collect());
    assert_eq!(stream.request_id(), Some("req_7"));
    let mut events = Vec::new();
    for _ in 0..5 {
        events.push(ready(&mut stream).unwrap().unwrap());
    }
    assert_eq!(events[0], ResponseEvent::ServerModel("served".to_string()));
    assert_eq!(events[1..], decoded[..]);
    drop(probe.more);
    assert_eq!(
        ready(&mut stream),
        None,
        "the source ended, so does the stream"
    );
}

#[test]
fn an_error_reaches_the_consumer_unchanged() {
    let (mut stream, _probe) = stream_over(vec![Err(StreamError::ClosedBeforeCompleted)]);
    assert!(matches!(
        ready(&mut stream),
        Some(Ok(ResponseEvent::ServerModel(_)))
    ));
    assert_eq!(
        ready(&mut stream),
        Some(Err(StreamError::ClosedBeforeCompleted))
    );
}

/// Cancellation is ownership: the source (and with it the connection) goes when the stream does,
/// at once, on the dropping task.
#[test]
fn dropping_the_stream_drops_the_source_at_once() {
    let (mut stream, probe) = stream_over(vec![Ok(ResponseEvent::Created { response_id: None })]);
    assert!(ready(&mut stream).is_some());
    assert!(ready(&mut stream).is_some());
    assert!(
        stream.next().now_or_never().is_none(),
        "an exhausted source waits"
    );
    assert!(!probe.dropped.load(Ordering::SeqCst));
    drop(stream);
    assert!(probe.dropped.load(Ordering::SeqCst));
    assert!(
        probe.more.send(delta(0)).is_err(),
        "nobody reads the source any more"
    );
}

/// Bounded memory: nothing reads ahead of the consumer. A consumer that stops reading stops the
/// source where it is, however much the source could give.
#[test]
fn the_source_is_read_only_as_far_as_the_consumer_reads() {
    let (mut stream, probe) = stream_over((0..1000).map(delta).collect());
    assert_eq!(
        probe.taken.load(Ordering::SeqCst),
        0,
        "nothing read unasked"
    );
    assert!(matches!(
        ready(&mut stream),
        Some(Ok(ResponseEvent::ServerModel(_)))
    ));
    assert_eq!(
        probe.taken.load(Ordering::SeqCst),
        0,
        "header events come from the stream itself"
    );
    for i in 0..10 {
        assert_eq!(ready(&mut stream), Some(delta(i)));
    }
    assert_eq!(probe.taken.load(Ordering::SeqCst), 10);
}

/// A `select!` that drops a pending `next` (an interrupt racing the provider) loses no event.
#[test]
fn dropping_a_pending_next_loses_no_event() {
    let (mut stream, probe) = stream_over(Vec::new());
    assert!(ready(&mut stream).is_some(), "the header event");
    assert!(stream.next().now_or_never().is_none(), "waits for input");
    probe.more.send(delta(1)).unwrap();
    assert_eq!(ready(&mut stream), Some(delta(1)));
}
