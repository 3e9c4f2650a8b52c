//! A bounded, deterministic randomized run of the decoder over mutated transcripts: the same
//! properties as the `fuzz/` target (`sse_decoder`), runnable with plain `cargo test`.

use bytes::Bytes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::super::event::ResponseEvent;
use super::super::sse_frame::frames_of;
use super::super::StreamError;
use std::convert::Infallible;

use super::{
    collect_in_bursts, decode_chunks, render_sse, transcript_events, SseEventStream,
    CRLF_WITH_COMMENTS, IDLE, LF,
};

type Item = Result<ResponseEvent, StreamError>;

fn mutate(rng: &mut StdRng, bytes: &mut Vec<u8>) {
    for _ in 0..rng.gen_range(1..8) {
        if bytes.is_empty() {
            return;
        }
        let at = rng.gen_range(0..bytes.len());
        match rng.gen_range(0..6) {
            0 => bytes[at] = rng.gen(),
            1 => {
                let end = (at + rng.gen_range(1..64)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 => {
                let end = (at + rng.gen_range(1..256)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                let to = rng.gen_range(0..bytes.len());
                bytes.splice(to..to, copy);
            }
            3 => {
                bytes.splice(at..at, *b"\n\n");
            }
            4 => bytes.insert(at, b'\r'),
            _ => bytes.truncate(at),
        }
    }
}

fn assert_well_terminated(items: &[Item], frame_count: usize) {
    assert!(items.len() <= frame_count + 1, "more items than frames");
    let terminal = |item: &Item| matches!(item, Err(_) | Ok(ResponseEvent::Completed { .. }));
    let (last, rest) = items
        .split_last()
        .expect("a stream always ends with an item");
    assert!(terminal(last), "ended without a terminal item: {last:?}");
    assert!(
        !rest.iter().any(terminal),
        "a terminal item before the last"
    );
}

#[tokio::test]
async fn mutated_transcripts_decode_the_same_however_chunked_or_burst_read_and_end_exactly_once() {
    let mut rng = StdRng::seed_from_u64(0x5EED_0003);
    let events = transcript_events();
    let originals = [
        render_sse(&events, LF),
        render_sse(&events, CRLF_WITH_COMMENTS),
    ];
    for round in 0..150 {
        let mut bytes = originals[round % 2].clone();
        mutate(&mut rng, &mut bytes);
        let bytes = Bytes::from(bytes);
        let whole = decode_chunks(vec![bytes.clone()]).await;
        assert_well_terminated(&whole, frames_of(&bytes).len());
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let end = (at + rng.gen_range(1..97)).min(bytes.len());
            chunks.push(bytes.slice(at..end));
            at = end;
        }
        assert_eq!(decode_chunks(chunks.clone()).await, whole, "round {round}");
        let stream = futures::stream::iter(chunks.into_iter().map(Ok::<Bytes, Infallible>));
        let bursts = collect_in_bursts(SseEventStream::new(stream, IDLE)).await;
        assert_eq!(bursts, whole, "round {round}, read in bursts");
    }
}
