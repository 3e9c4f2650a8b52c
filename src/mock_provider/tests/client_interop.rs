//! The mock provider through a real HTTP client (reqwest), and shutdown.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use super::super::{simple_text_response, Fault, MockProvider, Reply, Script, SseReply};
use super::{eventually, parse_sse, within, Chunk, RawClient};

fn client() -> reqwest::Client {
    reqwest::Client::builder().build().unwrap()
}

#[tokio::test]
async fn reqwest_streams_replies_over_one_reused_connection() {
    let replies = [
        simple_text_response("resp_1", "msg_1", "Hello there", 3).into(),
        Reply::status(429, "slow down"),
    ];
    let mock = within(MockProvider::start(Script::new(replies)))
        .await
        .unwrap();
    assert!(mock.base_url().starts_with("http://127.0.0.1:"));
    let http = client();

    let response = within(
        http.post(format!("{}/responses", mock.base_url()))
            .body(json!({"model": "m"}).to_string())
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 200);
    let text = within(response.text()).await.unwrap();
    let events = parse_sse(&text);
    let names: Vec<_> = events
        .iter()
        .map(|(name, _)| name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_item.done",
            "response.completed",
        ]
    );

    let response = within(
        http.post(format!("{}/responses", mock.base_url()))
            .body("not json")
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(within(response.text()).await.unwrap(), "slow down");

    let requests = mock.requests();
    assert_eq!(requests[0].body, json!({"model": "m"}));
    assert_eq!(requests[1].body, serde_json::Value::Null);
    assert_eq!(&requests[1].raw_body[..], b"not json");
    assert_eq!(mock.accepted_connections(), 1);
    mock.shutdown().await;
}

#[tokio::test]
async fn dropping_a_reqwest_stream_is_counted_as_a_closed_connection() {
    let reply = simple_text_response("resp_1", "msg_1", "Hello", 5).held_open_after_end();
    let mock = within(MockProvider::start(Script::new([reply.into()])))
        .await
        .unwrap();
    let http = client();
    let response = within(http.post(format!("{}/responses", mock.base_url())).send())
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("response.completed") {
        let bytes = within(body.next()).await.unwrap().unwrap();
        seen.push_str(std::str::from_utf8(&bytes).unwrap());
    }
    assert_eq!(mock.closed_connections(), 0);
    drop(body);
    eventually(|| mock.closed_connections() == 1).await;
}

#[tokio::test]
async fn reqwest_sees_a_cut_body_as_an_error() {
    let reply = simple_text_response("resp_1", "msg_1", "Hello", 5).with_fault(150, Fault::Cut);
    let mock = within(MockProvider::start(Script::new([reply.into()])))
        .await
        .unwrap();
    let response = within(
        client()
            .post(format!("{}/responses", mock.base_url()))
            .send(),
    )
    .await
    .unwrap();
    assert!(within(response.text()).await.is_err());
}

#[tokio::test]
async fn shutdown_ends_stalled_connections_and_waits_for_them() {
    let reply = SseReply::default().with_fault(0, Fault::Stall);
    let mock = within(MockProvider::start(Script::new([reply.into()])))
        .await
        .unwrap();
    let mut stalled = RawClient::connect(mock.addr()).await;
    stalled.post_json("/v1/responses", &json!({})).await;
    assert_eq!(stalled.read_head().await.status, 200);
    let mut idle = RawClient::connect(mock.addr()).await;
    eventually(|| mock.accepted_connections() == 2).await;

    let addr = mock.addr();
    within(mock.shutdown()).await;
    assert_eq!(stalled.next_chunk().await, Chunk::Eof);
    assert!(idle.closed_within(Duration::from_secs(1)).await);
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let mock = within(MockProvider::start(Script::default()))
        .await
        .unwrap();
    let mut idle = RawClient::connect(mock.addr()).await;
    eventually(|| mock.accepted_connections() == 1).await;
    drop(mock);
    assert!(idle.closed_within(super::STEP).await);
}

#[tokio::test]
async fn twenty_thousand_deltas_stream_through_reqwest() {
    let reply = super::super::many_deltas("resp_b", "msg_b", 20_000, "x").with_send_time_stamps();
    let mock = within(MockProvider::start(Script::new([reply.into()])))
        .await
        .unwrap();
    let response = within(
        client()
            .post(format!("{}/responses", mock.base_url()))
            .send(),
    )
    .await
    .unwrap();
    let text = within(response.text()).await.unwrap();
    let events = parse_sse(&text);
    assert_eq!(events.len(), 20_004);
    let stamped = events
        .iter()
        .filter(|(_, data)| data.contains("\"sent_at_us\":"))
        .count();
    assert_eq!(stamped, 20_000);
}
