//! Request parsing and chunked decoding, fed whole, split at every byte, and
//! fed garbage; plus SSE event formatting.

use bytes::BytesMut;
use serde_json::json;

use super::super::http::{
    encode_chunk, encode_head, parse_head, read_body, read_head, BodyFraming, ChunkedDecoder,
    HttpError, HttpVersion, RequestHead,
};
use super::super::script::SseEvent;
use super::super::sse::{format_event, stamp, SENT_AT_US_PLACEHOLDER};

const REQUEST: &[u8] =
    b"POST /v1/responses?x=1 HTTP/1.1\r\nHost: mock\r\nContent-Type:  application/json \r\n\r\n";

fn expected_head() -> RequestHead {
    RequestHead {
        method: "POST".into(),
        path: "/v1/responses".into(),
        query: Some("x=1".into()),
        version: HttpVersion::Http11,
        headers: vec![
            ("host".into(), "mock".into()),
            ("content-type".into(), "application/json".into()),
        ],
    }
}

#[test]
fn head_parses_only_once_complete_at_every_split() {
    for split in 0..REQUEST.len() {
        assert!(
            parse_head(&REQUEST[..split]).unwrap().is_none(),
            "split {split}"
        );
    }
    let (head, consumed) = parse_head(REQUEST).unwrap().unwrap();
    assert_eq!(head, expected_head());
    assert_eq!(consumed, REQUEST.len());
}

#[test]
fn head_accepts_bare_newlines_and_absolute_targets() {
    let (head, consumed) = parse_head(b"GET http://127.0.0.1:9/v1/models HTTP/1.0\nA: b\n\nrest")
        .unwrap()
        .unwrap();
    assert_eq!(head.path, "/v1/models");
    assert_eq!(head.version, HttpVersion::Http10);
    assert_eq!(head.headers, vec![("a".to_owned(), "b".to_owned())]);
    assert_eq!(
        consumed,
        "GET http://127.0.0.1:9/v1/models HTTP/1.0\nA: b\n\n".len()
    );
    assert!(head.wants_close());
}

#[test]
fn malformed_heads_are_errors() {
    let cases: [&[u8]; 7] = [
        b"GET / HTTP/2\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET  / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        b"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
        b"G(T / HTTP/1.1\r\n\r\n",
        b"GET relative HTTP/1.1\r\n\r\n",
    ];
    for case in cases {
        let result = parse_head(case);
        assert!(
            matches!(result, Err(HttpError::Malformed(_))),
            "{}: {result:?}",
            String::from_utf8_lossy(case)
        );
    }
    let huge = vec![b'a'; 70 * 1024];
    assert!(matches!(parse_head(&huge), Err(HttpError::HeadTooLarge)));
}

fn head_with(headers: &[(&str, &str)]) -> RequestHead {
    let headers = headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    RequestHead {
        headers,
        ..expected_head()
    }
}

#[test]
fn body_framing_rules() {
    assert_eq!(head_with(&[]).body_framing().unwrap(), BodyFraming::Empty);
    assert_eq!(
        head_with(&[("content-length", "12")])
            .body_framing()
            .unwrap(),
        BodyFraming::Length(12)
    );
    let repeated = head_with(&[("content-length", "3"), ("content-length", "3")]);
    assert_eq!(repeated.body_framing().unwrap(), BodyFraming::Length(3));
    let chunked = head_with(&[
        ("transfer-encoding", "gzip, Chunked"),
        ("content-length", "3"),
    ]);
    assert_eq!(chunked.body_framing().unwrap(), BodyFraming::Chunked);
    for bad in [
        head_with(&[("content-length", "3"), ("content-length", "4")]),
        head_with(&[("content-length", "-1")]),
        head_with(&[("transfer-encoding", "gzip")]),
    ] {
        assert!(
            matches!(bad.body_framing(), Err(HttpError::Malformed(_))),
            "{bad:?}"
        );
    }
    let huge = head_with(&[("content-length", "999999999999")]);
    assert!(matches!(huge.body_framing(), Err(HttpError::BodyTooLarge)));
    assert!(head_with(&[("connection", "keep-alive, Close")]).wants_close());
    assert!(head_with(&[("expect", "100-Continue")]).expects_continue());
}

const CHUNKED: &[u8] = b"4\r\nWiki\r\n6;name=value\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT";
const DECODED: &[u8] = b"Wikipedia in \r\n\r\nchunks.";

#[test]
fn chunked_body_decodes_at_every_split() {
    for split in 0..=CHUNKED.len() {
        let mut decoder = ChunkedDecoder::default();
        let mut buf = BytesMut::from(&CHUNKED[..split]);
        let mut done = decoder.decode(&mut buf).unwrap();
        buf.extend_from_slice(&CHUNKED[split..]);
        done = done || decoder.decode(&mut buf).unwrap();
        assert!(done, "split {split}");
        assert_eq!(decoder.into_body(), DECODED, "split {split}");
        assert_eq!(&buf[..], b"NEXT", "split {split}");
    }
}

#[test]
fn chunked_body_decodes_byte_by_byte() {
    let mut decoder = ChunkedDecoder::default();
    let mut buf = BytesMut::new();
    let mut done_at = None;
    for (index, byte) in CHUNKED.iter().enumerate() {
        buf.extend_from_slice(&[*byte]);
        if decoder.decode(&mut buf).unwrap() {
            done_at = Some(index);
            break;
        }
    }
    assert_eq!(done_at, Some(CHUNKED.len() - "NEXT".len() - 1));
    assert_eq!(decoder.into_body(), DECODED);
}

#[test]
fn malformed_chunked_bodies_are_errors() {
    for case in [
        &b"x\r\n"[..],
        b"3\r\nabcd\r\n",
        b"ffffffffffffffffffff\r\n",
        b";\r\n",
    ] {
        let mut decoder = ChunkedDecoder::default();
        let result = decoder.decode(&mut BytesMut::from(case));
        assert!(
            result.is_err(),
            "{}: {result:?}",
            String::from_utf8_lossy(case)
        );
    }
    let mut decoder = ChunkedDecoder::default();
    let long_line = vec![b'1'; 10 * 1024];
    assert!(decoder.decode(&mut BytesMut::from(&long_line[..])).is_err());
}

#[test]
fn random_input_never_panics() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let alphabet = b"0123456789abcdefABCDEF:; \r\n\t/HTTP.GETPOSTchunked";
    for _ in 0..2_000 {
        let length = rng.gen_range(0..200);
        let bytes: Vec<u8> = (0..length)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
            .collect();
        let _ = parse_head(&bytes);
        let _ = ChunkedDecoder::default().decode(&mut BytesMut::from(&bytes[..]));
        if let Ok(Some((head, _))) = parse_head(&bytes) {
            let _ = head.body_framing();
        }
    }
}

#[tokio::test]
async fn pipelined_requests_read_from_one_buffer() {
    let wire = b"\r\nPOST /v1/responses HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}\
                 POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n[\r\n1\r\n]\r\n0\r\n\r\n";
    let mut reader: &[u8] = wire;
    let mut buf = BytesMut::new();
    let mut bodies = Vec::new();
    while let Some(head) = read_head(&mut reader, &mut buf).await.unwrap() {
        let framing = head.body_framing().unwrap();
        bodies.push(read_body(&mut reader, &mut buf, framing).await.unwrap());
    }
    assert_eq!(bodies, vec![&b"{}"[..], b"[]"]);
}

#[tokio::test]
async fn truncated_requests_are_unexpected_eof() {
    let mut reader: &[u8] = b"POST / HTTP/1.1\r\nContent-Len";
    let result = read_head(&mut reader, &mut BytesMut::new()).await;
    assert!(matches!(result, Err(HttpError::UnexpectedEof)));
    let mut reader: &[u8] = b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}";
    let mut buf = BytesMut::new();
    let head = read_head(&mut reader, &mut buf).await.unwrap().unwrap();
    let result = read_body(&mut reader, &mut buf, head.body_framing().unwrap()).await;
    assert!(matches!(result, Err(HttpError::UnexpectedEof)));
}

#[test]
fn response_encoding() {
    let headers = vec![("x-a".to_owned(), "1\r\nInjected: yes".to_owned())];
    assert_eq!(
        encode_head(429, &headers),
        b"HTTP/1.1 429 Too Many Requests\r\nx-a: 1  Injected: yes\r\n\r\n"
    );
    let mut out = Vec::new();
    encode_chunk(b"", &mut out);
    encode_chunk(&[b'z'; 26], &mut out);
    assert_eq!(out, [&b"1a\r\n"[..], &[b'z'; 26], b"\r\n"].concat());
}

#[test]
fn events_format_as_sse_text() {
    let mut out = Vec::new();
    format_event(
        &SseEvent::json(&json!({"type": "a.b", "x": 1})),
        false,
        &mut out,
    );
    format_event(
        &SseEvent {
            event: Some("custom".into()),
            data: "line1\r\nline2".into(),
        },
        false,
        &mut out,
    );
    format_event(&SseEvent::raw("{\"type\":\"derived\"}"), false, &mut out);
    let expected = "event: a.b\ndata: {\"type\":\"a.b\",\"x\":1}\n\n\
                    event: custom\ndata: line1\ndata: line2\n\n\
                    event: derived\ndata: {\"type\":\"derived\"}\n\n";
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn stamps_splice_into_objects_only() {
    assert_eq!(stamp(r#"{"a":1}"#, 5), r#"{"a":1,"sent_at_us":5}"#);
    assert_eq!(stamp("{ }", 5), r#"{ "sent_at_us":5}"#);
    assert_eq!(stamp("[1]", 5), "[1]");
    assert_eq!(stamp("oops}", 5), "oops}");
}

#[test]
fn stamps_replace_the_placeholder_in_text_as_well() {
    let data = format!(r#"{{"delta":"{SENT_AT_US_PLACEHOLDER} "}}"#);
    assert_eq!(stamp(&data, 42), r#"{"delta":"42 ","sent_at_us":42}"#);
}
