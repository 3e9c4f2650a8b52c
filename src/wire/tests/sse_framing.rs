//! SSE framing: chunk boundaries never change what a stream means.

use bytes::Bytes;

use std::convert::Infallible;

use tokio::sync::mpsc;

use super::{
    collect_in_bursts, decode_chunks, expected_full_response, render_sse, transcript_events,
    CRLF_WITH_COMMENTS, IDLE, LF,
};
use crate::wire::sse::SseEventStream;

#[tokio::test]
async fn transcript_decodes_to_every_event_kind_in_order() {
    let bytes = render_sse(&transcript_events(), LF);
    let events = decode_chunks(vec![Bytes::from(bytes)]).await;
    assert_eq!(events, expected_full_response());
}

#[tokio::test]
async fn crlf_comments_and_unspaced_data_decode_like_plain_lf() {
    let bytes = render_sse(&transcript_events(), CRLF_WITH_COMMENTS);
    let events = decode_chunks(vec![Bytes::from(bytes)]).await;
    assert_eq!(events, expected_full_response());
}

/// Covers a boundary inside every multi-byte character (emoji, CJK, accented letters), inside
/// every `\r\n`, inside `event:`/`data:` field names and between the lines of multi-line data.
#[tokio::test]
async fn splitting_the_transcript_at_every_byte_offset_gives_identical_events() {
    let bytes = Bytes::from(render_sse(&transcript_events(), CRLF_WITH_COMMENTS));
    let expected = expected_full_response();
    assert!(std::str::from_utf8(&bytes)
        .unwrap()
        .chars()
        .any(|c| c.len_utf8() == 4));
    for offset in 0..=bytes.len() {
        let chunks = vec![bytes.slice(..offset), bytes.slice(offset..)];
        let events = decode_chunks(chunks).await;
        assert_eq!(events, expected, "split at byte {offset}");
    }
}

#[tokio::test]
async fn one_byte_chunks_give_identical_events() {
    let bytes = Bytes::from(render_sse(&transcript_events(), CRLF_WITH_COMMENTS));
    let chunks = (0..bytes.len()).map(|i| bytes.slice(i..=i)).collect();
    assert_eq!(decode_chunks(chunks).await, expected_full_response());
}

/// Taking events in bursts (what the received bytes already decide, without waiting) yields the
/// same events in the same order as taking them one wait at a time, wherever the chunks split.
#[tokio::test]
async fn bursts_of_buffered_events_equal_one_at_a_time_decoding_at_every_split() {
    let bytes = Bytes::from(render_sse(&transcript_events(), CRLF_WITH_COMMENTS));
    let expected = expected_full_response();
    for offset in 0..=bytes.len() {
        let chunks = [bytes.slice(..offset), bytes.slice(offset..)];
        let stream = futures::stream::iter(chunks.into_iter().map(Ok::<Bytes, Infallible>));
        let events = collect_in_bursts(SseEventStream::new(stream, IDLE)).await;
        assert_eq!(events, expected, "split at byte {offset}");
    }
    let one_byte = (0..bytes.len()).map(|i| Ok::<Bytes, Infallible>(bytes.slice(i..=i)));
    let events =
        collect_in_bursts(SseEventStream::new(futures::stream::iter(one_byte), IDLE)).await;
    assert_eq!(events, expected);
}

/// A burst ends where the received bytes end: with the rest of the body still in flight,
/// `next_buffered_event` says "nothing decided" instead of waiting, and the next awaited event
/// picks up exactly where the burst stopped.
#[tokio::test]
async fn a_burst_stops_at_bytes_not_yet_received_without_waiting() {
    let bytes = Bytes::from(render_sse(&transcript_events(), LF));
    let half = bytes.len() / 2;
    let (tx, rx) = mpsc::unbounded_channel::<Result<Bytes, Infallible>>();
    let mut stream = SseEventStream::new(tokio_stream_of(rx), IDLE);
    tx.send(Ok(bytes.slice(..half))).unwrap();
    let mut events = vec![stream.next_event().await.unwrap()];
    while let Some(event) = stream.next_buffered_event() {
        events.push(event);
    }
    // Nothing more is decidable from the first half; no wait happened (we are still here).
    assert!(events.len() < expected_full_response().len());
    tx.send(Ok(bytes.slice(half..))).unwrap();
    drop(tx);
    let mut rest = Vec::new();
    while let Some(event) = stream.next_event().await {
        rest.push(event);
        while let Some(event) = stream.next_buffered_event() {
            rest.push(event);
        }
        assert!(rest.len() < 10_000);
    }
    events.extend(rest);
    assert_eq!(events, expected_full_response());
}

fn tokio_stream_of<T>(
    mut rx: mpsc::UnboundedReceiver<T>,
) -> impl futures::Stream<Item = T> + Unpin {
    Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}
