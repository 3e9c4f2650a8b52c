//! The SSE framer against the event-stream rules, and against eventsource-stream as a reference.

use bytes::Bytes;
use futures::StreamExt;

use super::super::sse_frame::{frames_of, SseFrame, SseFramer};
use super::{render_sse, transcript_events, SseStyle, CRLF_WITH_COMMENTS, LF};

fn frame(event: &str, data: &str) -> SseFrame {
    SseFrame {
        event: event.to_string(),
        data: data.to_string(),
    }
}

#[test]
fn line_endings_comments_and_fields_follow_the_event_stream_rules() {
    let text = "\u{feff}: comment\r\nevent: one\rdata: a\ndata:b\r\ndata\n\nid: 7\nretry: 10\n\n\
                data:  two spaces\nunknown: x\n\nevent: orphan\n\ndata: after\n\n";
    assert_eq!(
        frames_of(text.as_bytes()),
        vec![
            frame("one", "a\nb\n"),
            frame("", " two spaces"),
            frame("", "after")
        ]
    );
}

#[test]
fn a_lone_cr_at_a_chunk_end_waits_for_the_next_byte() {
    let mut framer = SseFramer::new();
    framer.push(b"data: x\r");
    assert_eq!(framer.next_frame(), None);
    framer.push(b"\n\r");
    assert_eq!(framer.next_frame(), None);
    framer.push(b"\n");
    assert_eq!(framer.next_frame(), Some(frame("", "x")));
    assert_eq!(framer.next_frame(), None);
}

#[test]
fn a_frame_not_closed_before_eof_is_not_dispatched() {
    assert_eq!(
        frames_of(b"data: complete\n\ndata: partial\n"),
        vec![frame("", "complete")]
    );
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    assert_eq!(
        frames_of(b"data: a\xFFb\n\n"),
        vec![frame("", "a\u{FFFD}b")]
    );
}

#[test]
fn a_bom_split_across_chunks_is_still_dropped() {
    let mut framer = SseFramer::new();
    framer.push(b"\xEF\xBB");
    assert_eq!(framer.next_frame(), None);
    framer.push(b"\xBFdata: x\n\n");
    assert_eq!(framer.next_frame(), Some(frame("", "x")));
}

const CR_ONLY: SseStyle = SseStyle {
    line_end: "\r",
    comments: true,
    no_space: false,
};

#[test]
fn frames_are_identical_for_every_split_point_with_every_line_ending() {
    for style in [LF, CRLF_WITH_COMMENTS, CR_ONLY] {
        let bytes = render_sse(&transcript_events(), style);
        let whole = frames_of(&bytes);
        assert_eq!(whole.len(), transcript_events().len());
        for offset in 0..=bytes.len() {
            let mut framer = SseFramer::new();
            let mut frames = Vec::new();
            for part in [&bytes[..offset], &bytes[offset..]] {
                framer.push(part);
                frames.extend(std::iter::from_fn(|| framer.next_frame()));
            }
            framer.finish();
            frames.extend(std::iter::from_fn(|| framer.next_frame()));
            assert_eq!(frames, whole, "split at byte {offset}");
        }
    }
}

/// eventsource-stream is an independent implementation of the same standard.
#[tokio::test]
async fn frames_match_eventsource_stream_on_the_transcript() {
    use eventsource_stream::Eventsource;
    for style in [LF, CRLF_WITH_COMMENTS] {
        let bytes = Bytes::from(render_sse(&transcript_events(), style));
        let chunks: Vec<_> = bytes.chunks(7).map(Bytes::copy_from_slice).collect();
        let reference: Vec<SseFrame> =
            futures::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>))
                .eventsource()
                .map(|event| {
                    let event = event.unwrap();
                    let name = if event.event == "message" {
                        String::new()
                    } else {
                        event.event
                    };
                    frame(&name, &event.data)
                })
                .collect()
                .await;
        assert_eq!(frames_of(&bytes), reference);
    }
}

/// Many short `data` lines with no blank line count toward the cap like one long line.
#[test]
fn data_lines_without_a_blank_line_count_toward_the_frame_cap() {
    use super::super::sse_frame::MAX_FRAME_BYTES;
    let line = format!("data: {}\n", "y".repeat(64 * 1024 - 7));
    let mut framer = SseFramer::new();
    for _ in 0..MAX_FRAME_BYTES / line.len() {
        framer.push(line.as_bytes());
        assert_eq!(framer.next_frame(), None);
    }
    assert!(!framer.frame_too_large());
    framer.push(line.as_bytes());
    framer.push(line.as_bytes());
    assert_eq!(framer.next_frame(), None);
    assert!(framer.frame_too_large());
    framer.push(b"\n");
    assert!(
        framer.next_frame().is_some(),
        "a blank line still dispatches it"
    );
    assert!(!framer.frame_too_large());
}
