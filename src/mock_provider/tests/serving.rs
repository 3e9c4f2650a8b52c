//! A live mock provider driven over raw TCP: reply bytes and chunk framing,
//! request recording, status replies, faults, hang-up counting, keep-alive.

use std::time::Duration;

use serde_json::json;

use super::super::{model_list, Chunking, Fault, MockProvider, Reply, Script, SseEvent, SseReply};
use super::{body_text, eventually, parse_sse, within, Chunk, RawClient};

/// Literal data, so the expected bytes do not depend on JSON key order.
fn two_events() -> Vec<SseEvent> {
    let event = |name: &str, data: &str| SseEvent {
        event: Some(name.into()),
        data: data.into(),
    };
    vec![
        event(
            "response.created",
            r#"{"sequence_number":0,"type":"response.created"}"#,
        ),
        event(
            "response.completed",
            r#"{"sequence_number":1,"type":"response.completed"}"#,
        ),
    ]
}

const CREATED: &str =
    "event: response.created\ndata: {\"sequence_number\":0,\"type\":\"response.created\"}\n\n";
const COMPLETED: &str =
    "event: response.completed\ndata: {\"sequence_number\":1,\"type\":\"response.completed\"}\n\n";

async fn start(replies: Vec<Reply>) -> MockProvider {
    within(MockProvider::start(Script::new(replies)))
        .await
        .unwrap()
}

#[tokio::test]
async fn sse_reply_is_one_chunk_per_event_with_sse_headers() {
    let reply = SseReply::new(two_events()).with_header("openai-model", "gpt-5-mini");
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .post_json("/v1/responses", &json!({"model": "m"}))
        .await;

    let head = client.read_head().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    assert_eq!(head.header("transfer-encoding"), Some("chunked"));
    assert_eq!(head.header("openai-model"), Some("gpt-5-mini"));
    assert_eq!(head.header("content-length"), None);
    let chunks = client.all_chunks().await;
    assert_eq!(
        chunks,
        vec![
            Chunk::Data(CREATED.into()),
            Chunk::Data(COMPLETED.into()),
            Chunk::Last
        ]
    );
    mock.shutdown().await;
}

#[tokio::test]
async fn fixed_byte_chunking_cuts_the_body_at_every_n_bytes() {
    let reply = SseReply::new(two_events()).with_chunking(Chunking::FixedBytes(7));
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    let chunks = client.all_chunks().await;

    let full = format!("{CREATED}{COMPLETED}");
    assert_eq!(body_text(&chunks), full);
    assert_eq!(chunks.len(), full.len().div_ceil(7) + 1);
    for chunk in &chunks[..chunks.len() - 2] {
        assert!(
            matches!(chunk, Chunk::Data(data) if data.len() == 7),
            "{chunk:?}"
        );
    }
    assert_eq!(chunks.last(), Some(&Chunk::Last));
}

#[tokio::test]
async fn whole_chunking_sends_one_chunk() {
    let reply = SseReply::new(two_events()).with_chunking(Chunking::Whole);
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    let expected = vec![
        Chunk::Data(format!("{CREATED}{COMPLETED}").into()),
        Chunk::Last,
    ];
    assert_eq!(client.all_chunks().await, expected);
}

#[tokio::test]
async fn raw_data_and_multi_line_data_are_framed_as_sse() {
    let events = vec![
        SseEvent::raw("[DONE]"),
        SseEvent::raw("{\"broken\":"),
        SseEvent::raw("a\nb"),
    ];
    let mock = start(vec![Reply::sse(events)]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    let text = body_text(&client.all_chunks().await);
    assert_eq!(
        text,
        "data: [DONE]\n\ndata: {\"broken\":\n\ndata: a\ndata: b\n\n"
    );
}

#[tokio::test]
async fn request_is_recorded_before_a_stalled_reply_and_hang_up_is_counted() {
    let reply = SseReply::new(two_events()).with_fault(0, Fault::Stall);
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .post_json(
            "/v1/responses?stream=true",
            &json!({"model": "gpt-5", "input": []}),
        )
        .await;

    let requests = mock.wait_for_requests(1, super::STEP).await;
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.query.as_deref(), Some("stream=true"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.header("Content-Type"), Some("application/json"));
    assert_eq!(request.body, json!({"model": "gpt-5", "input": []}));
    assert_eq!(
        request.raw_body,
        json!({"model": "gpt-5", "input": []}).to_string()
    );

    let head = client.read_head().await;
    assert_eq!(head.status, 200);
    assert!(client.silent_for(Duration::from_millis(150)).await);
    assert_eq!(mock.closed_connections(), 0);
    drop(client);
    eventually(|| mock.closed_connections() == 1).await;
}

#[tokio::test]
async fn stall_mid_body_sends_exactly_the_budget_then_nothing() {
    let reply = SseReply::new(two_events()).with_fault(10, Fault::Stall);
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    assert_eq!(
        client.next_chunk().await,
        Chunk::Data(CREATED.as_bytes()[..10].to_vec())
    );
    assert!(client.silent_for(Duration::from_millis(150)).await);
}

#[tokio::test]
async fn cut_closes_the_connection_mid_body() {
    let reply = SseReply::new(two_events()).with_fault(CREATED.len() + 5, Fault::Cut);
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    let chunks = client.all_chunks().await;
    let expected = vec![
        Chunk::Data(CREATED.into()),
        Chunk::Data(COMPLETED.as_bytes()[..5].to_vec()),
        Chunk::Eof,
    ];
    assert_eq!(chunks, expected);
    // The server closed, not the client.
    assert_eq!(mock.closed_connections(), 0);
}

#[tokio::test]
async fn fault_beyond_the_body_fires_after_the_last_event() {
    let reply = SseReply::new(two_events()).with_fault(100_000, Fault::Cut);
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    let expected = vec![
        Chunk::Data(CREATED.into()),
        Chunk::Data(COMPLETED.into()),
        Chunk::Eof,
    ];
    assert_eq!(client.all_chunks().await, expected);
}

#[tokio::test]
async fn hold_open_after_end_never_terminates_the_body() {
    let reply = SseReply::new(two_events()).held_open_after_end();
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    assert_eq!(client.next_chunk().await, Chunk::Data(CREATED.into()));
    assert_eq!(client.next_chunk().await, Chunk::Data(COMPLETED.into()));
    assert!(client.silent_for(Duration::from_millis(200)).await);
    drop(client);
    eventually(|| mock.closed_connections() == 1).await;
}

#[tokio::test]
async fn client_dropping_a_paced_stream_is_counted() {
    let events = (0..200)
        .map(|n| SseEvent::json(&json!({"type": "response.output_text.delta", "delta": n})))
        .collect();
    let reply = SseReply::new(events).with_pace(Duration::from_millis(10));
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    assert!(matches!(client.next_chunk().await, Chunk::Data(_)));
    drop(client);
    eventually(|| mock.closed_connections() == 1).await;
}

#[tokio::test]
async fn pacing_spreads_events_over_time() {
    let events = (0..6)
        .map(|n| SseEvent::json(&json!({"type": "x", "n": n})))
        .collect();
    let reply = SseReply::new(events).with_pace(Duration::from_millis(30));
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    let started = std::time::Instant::now();
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    assert_eq!(client.all_chunks().await.len(), 7);
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn send_time_stamps_only_text_deltas() {
    let events = vec![
        SseEvent::json(&json!({"type": "response.output_text.delta", "delta": "hi"})),
        SseEvent::json(&json!({"type": "response.completed"})),
    ];
    let reply = SseReply::new(events).with_send_time_stamps();
    let mock = start(vec![reply.into()]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client.post_json("/v1/responses", &json!({})).await;
    client.read_head().await;
    let events = parse_sse(&body_text(&client.all_chunks().await));
    let delta: serde_json::Value = serde_json::from_str(&events[0].1).unwrap();
    let completed: serde_json::Value = serde_json::from_str(&events[1].1).unwrap();
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros();
    let sent_at = u128::from(delta["sent_at_us"].as_u64().unwrap());
    assert!(
        sent_at <= now_us && now_us - sent_at < 10_000_000,
        "{sent_at} vs {now_us}"
    );
    assert_eq!(delta["delta"], "hi");
    assert_eq!(completed, json!({"type": "response.completed"}));
}

#[tokio::test]
async fn status_reply_then_keep_alive_then_exhausted_script() {
    let rate_limited = Reply::Status {
        status: 429,
        headers: vec![("retry-after".into(), "1".into())],
        body: r#"{"error":{"code":"rate_limit_exceeded"}}"#.into(),
    };
    let mock = start(vec![rate_limited, Reply::sse(two_events())]).await;
    let mut client = RawClient::connect(mock.addr()).await;

    client.post_json("/v1/responses", &json!({"n": 1})).await;
    let head = client.read_head().await;
    assert_eq!(head.status, 429);
    assert_eq!(head.header("retry-after"), Some("1"));
    assert_eq!(head.header("content-type"), Some("application/json"));
    assert_eq!(
        client.fixed_body(&head).await,
        r#"{"error":{"code":"rate_limit_exceeded"}}"#
    );

    client.post_json("/v1/responses", &json!({"n": 2})).await;
    assert_eq!(client.read_head().await.status, 200);
    assert_eq!(client.all_chunks().await.last(), Some(&Chunk::Last));

    client.post_json("/v1/responses", &json!({"n": 3})).await;
    let head = client.read_head().await;
    assert_eq!(head.status, 500);
    let body: serde_json::Value = serde_json::from_str(&client.fixed_body(&head).await).unwrap();
    assert_eq!(body["error"]["code"], "mock_script_exhausted");

    let bodies: Vec<_> = mock
        .requests()
        .into_iter()
        .map(|request| request.body)
        .collect();
    assert_eq!(
        bodies,
        vec![json!({"n": 1}), json!({"n": 2}), json!({"n": 3})]
    );
    assert_eq!(mock.accepted_connections(), 1);
    assert_eq!(mock.closed_connections(), 0);
}

#[tokio::test]
async fn when_exhausted_repeats_and_push_reply_appends() {
    let script = Script::new([]).with_when_exhausted(Reply::status(503, "busy"));
    let mock = within(MockProvider::start(script)).await.unwrap();
    let mut client = RawClient::connect(mock.addr()).await;
    for _ in 0..2 {
        client.post_json("/v1/responses", &json!({})).await;
        let head = client.read_head().await;
        assert_eq!(head.status, 503);
        assert_eq!(
            head.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        assert_eq!(client.fixed_body(&head).await, "busy");
    }
    mock.push_reply(Reply::status(201, "pushed"));
    assert_eq!(mock.remaining_replies(), 1);
    client.post_json("/v1/responses", &json!({})).await;
    assert_eq!(client.read_head().await.status, 201);
}

#[tokio::test]
async fn models_list_and_unknown_paths() {
    let mock = start(vec![]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send(b"GET /v1/models HTTP/1.1\r\nHost: mock\r\n\r\n")
        .await;
    let head = client.read_head().await;
    assert_eq!(head.status, 200);
    let body: serde_json::Value = serde_json::from_str(&client.fixed_body(&head).await).unwrap();
    assert_eq!(body["data"], json!([]));

    // A list the test sets is what later requests get.
    mock.serve_model_list(model_list(&["local-a", "local-b"]));
    client
        .send(b"GET /v1/models HTTP/1.1\r\nHost: mock\r\n\r\n")
        .await;
    let head = client.read_head().await;
    let body: serde_json::Value = serde_json::from_str(&client.fixed_body(&head).await).unwrap();
    assert_eq!(body["data"][1]["id"], "local-b");

    client
        .send(b"GET /v1/responses HTTP/1.1\r\nHost: mock\r\n\r\n")
        .await;
    let head = client.read_head().await;
    assert_eq!(head.status, 404);
    client.fixed_body(&head).await;
    // Model lists are recorded apart from the other requests.
    assert_eq!(mock.model_list_requests().len(), 2);
    assert_eq!(mock.requests().len(), 1);
    assert_eq!(mock.requests()[0].body, serde_json::Value::Null);
}

#[tokio::test]
async fn chunked_request_body_and_expect_continue() {
    let mock = start(vec![Reply::status(200, "one"), Reply::status(200, "two")]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send(b"POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{\"a\":\r\n2\r\n1}\r\n0\r\nX-Trailer: t\r\n\r\n")
        .await;
    let head = client.read_head().await;
    assert_eq!(client.fixed_body(&head).await, "one");
    assert_eq!(mock.requests()[0].body, json!({"a": 1}));

    client
        .send(b"POST /v1/responses HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        .await;
    assert_eq!(client.read_head().await.status, 100);
    client.send(b"{}").await;
    let head = client.read_head().await;
    assert_eq!(client.fixed_body(&head).await, "two");
    assert_eq!(mock.requests()[1].body, json!({}));
}

#[tokio::test]
async fn connection_close_is_honoured() {
    let mock = start(vec![Reply::sse(two_events())]).await;
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send(b"POST /v1/responses HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
        .await;
    let head = client.read_head().await;
    assert_eq!(head.header("connection"), Some("close"));
    assert_eq!(client.all_chunks().await.last(), Some(&Chunk::Last));
    assert!(client.closed_within(super::STEP).await);
}

#[tokio::test]
async fn garbage_gets_400_and_a_closed_connection() {
    let garbage: [&[u8]; 5] = [
        b"hello there\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"POST /v1/responses HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
        b"POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET \xff\xfe HTTP/1.1\r\n\r\n",
    ];
    let mock = start(vec![]).await;
    for bytes in garbage {
        let mut client = RawClient::connect(mock.addr()).await;
        client.send(bytes).await;
        let head = client.read_head().await;
        assert_eq!(head.status, 400, "{}", String::from_utf8_lossy(bytes));
        client.fixed_body(&head).await;
        assert!(client.closed_within(super::STEP).await);
    }
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn random_bytes_never_take_the_server_down() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mock = start(vec![]).await;
    for _ in 0..20 {
        let length = rng.gen_range(1..2048);
        let bytes: Vec<u8> = (0..length).map(|_| rng.gen()).collect();
        let mut client = RawClient::connect(mock.addr()).await;
        client.send(&bytes).await;
        // Whatever the answer, the server must close or keep waiting, not die.
        let _ = client.closed_within(Duration::from_millis(20)).await;
    }
    let mut client = RawClient::connect(mock.addr()).await;
    client.send(b"GET /v1/models HTTP/1.1\r\n\r\n").await;
    assert_eq!(client.read_head().await.status, 200);
}
