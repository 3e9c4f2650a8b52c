//! SSE framing: chunk boundaries never change what a stream means.

use bytes::Bytes;

use super::{
    decode_chunks, expected_full_response, render_sse, transcript_events, CRLF_WITH_COMMENTS, LF,
};

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
