//! Fuzzes the SSE decoder + event mapping (`openturn::wire::sse::SseEventStream`) and the
//! WebSocket decoder over the same frames.
//!
//! Input: the first byte picks a chunk size (1..=64), the rest is the SSE body. Checked beyond
//! "no panic, no hang": the decoder ends after at most one terminal item and yields nothing after
//! it; it yields no more items than there are frames plus one; and neither chunking nor reading
//! in bursts (`next_buffered_event`) changes the result: the body decoded whole, in chunks, and in
//! chunks taken a burst at a time gives identical items.

#![no_main]

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use openturn::wire::sse::SseEventStream;
use openturn::wire::sse_frame::frames_of;
use openturn::wire::websocket::{WebSocketEventStream, WebSocketMessage};
use openturn::wire::{ResponseEvent, ResponseEventSource, StreamError};

type Item = Result<ResponseEvent, StreamError>;

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap_or_else(|error| panic!("no runtime: {error}"));
}

/// Far beyond anything a fuzz input needs: an idle timeout must never fire on in-memory bytes.
const IDLE: Duration = Duration::from_secs(3600);

fn decode_sse(chunks: Vec<Bytes>, frame_count: usize, bursts: bool) -> Vec<Item> {
    let bytes = futures::stream::iter(chunks.into_iter().map(Ok::<Bytes, Infallible>));
    let mut stream = SseEventStream::new(bytes, IDLE);
    RUNTIME.with(|runtime| runtime.block_on(drain(&mut stream, frame_count, bursts)))
}

fn decode_websocket(messages: Vec<String>) -> Vec<Item> {
    let count = messages.len();
    let messages = futures::stream::iter(
        messages
            .into_iter()
            .map(|text| Ok::<_, Infallible>(WebSocketMessage::Text(text))),
    );
    let mut stream = WebSocketEventStream::new(messages, IDLE);
    RUNTIME.with(|runtime| runtime.block_on(drain(&mut stream, count, false)))
}

/// Collects items until the end, checking the terminal-item invariants on the way. With
/// `bursts`, each awaited item is followed by every item `next_buffered_event` hands out, the way
/// the client's decoder task reads.
async fn drain<S: ResponseEventSource>(source: &mut S, frame_count: usize, bursts: bool) -> Vec<Item> {
    let mut items = Vec::new();
    while let Some(item) = source.next_event().await {
        items.push(item);
        assert!(items.len() <= frame_count + 1, "more items than frames");
        while bursts {
            let Some(item) = source.next_buffered_event() else {
                break;
            };
            items.push(item);
            assert!(items.len() <= frame_count + 1, "more items than frames");
        }
    }
    assert!(source.next_event().await.is_none(), "an item after the end");
    let terminal = |item: &Item| matches!(item, Err(_) | Ok(ResponseEvent::Completed { .. }));
    if let Some((last, rest)) = items.split_last() {
        assert!(terminal(last), "the stream ended without a terminal item");
        assert!(
            !rest.iter().any(terminal),
            "a terminal item before the last"
        );
    }
    items
}

fuzz_target!(|input: &[u8]| {
    let Some((&selector, body)) = input.split_first() else {
        return;
    };
    let frames = frames_of(body);
    let whole = decode_sse(vec![Bytes::copy_from_slice(body)], frames.len(), false);
    let size = usize::from(selector % 64) + 1;
    let chunks: Vec<Bytes> = body.chunks(size).map(Bytes::copy_from_slice).collect();
    assert_eq!(
        decode_sse(chunks.clone(), frames.len(), false),
        whole,
        "chunking changed the result"
    );
    assert_eq!(
        decode_sse(chunks, frames.len(), true),
        whole,
        "reading in bursts changed the result"
    );
    let messages = frames.into_iter().map(|frame| frame.data).collect();
    decode_websocket(messages);
});
