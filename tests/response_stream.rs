//! The response stream end to end against the loopback mock provider, over both transports:
//! the same events from SSE and WebSocket, header events first, `completed` as the barrier, the
//! idle timeout, cancellation by drop, and the sticky turn state.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod client_support;

use std::time::Duration;

use client_support::{
    client, collect, context, eventually, full_response_script, mapped_reference,
    mock_provider_info, request, start_provider, within,
};
use openturn::client::WireApi;
use openturn::mock_provider::{simple_text_response, Fault, Reply, ResponseBuilder, Script, Usage};
use openturn::wire::{ApiError, ResponseEvent, StreamError};

const BOTH: [WireApi; 2] = [WireApi::Responses, WireApi::ResponsesWebsocket];

#[tokio::test]
async fn sse_and_websocket_yield_the_same_events_with_header_events_first() {
    let script = full_response_script();
    let mut expected = vec![
        Ok(ResponseEvent::ServerModel("gpt-5-mini".to_string())),
        Ok(ResponseEvent::ModelsEtag("etag-1".to_string())),
    ];
    expected.extend(mapped_reference(&script));
    assert!(
        expected.len() > 20,
        "the transcript covers every event kind"
    );
    for wire_api in BOTH {
        let mock = start_provider(script.clone()).await;
        let provider = mock_provider_info(&mock, wire_api);
        let context = context();
        let mut stream = within(client().stream(&provider, &request(), &context))
            .await
            .unwrap_or_else(|error| panic!("{wire_api:?}: {error}"));
        assert_eq!(stream.request_id(), Some("req_full"), "{wire_api:?}");
        let events = collect(&mut stream).await;
        assert_eq!(events, expected, "{wire_api:?}");
        assert_eq!(context.turn_state.get().as_deref(), Some("ts_full"));
        let done = events
            .iter()
            .filter(|event| matches!(event, Ok(ResponseEvent::OutputItemDone(_))))
            .count();
        assert_eq!(done, 6, "every output_item.done item reaches the consumer");
        assert!(
            matches!(events.last(), Some(Ok(ResponseEvent::Completed { response_id, .. })) if response_id == "resp_full"),
            "completed, with the response id, ends the stream"
        );
    }
}

#[tokio::test]
async fn websocket_sends_the_request_as_one_response_create_message() {
    let mock = start_provider(full_response_script()).await;
    let provider = mock_provider_info(&mock, WireApi::ResponsesWebsocket);
    let mut stream = within(client().stream(&provider, &request(), &context()))
        .await
        .unwrap();
    collect(&mut stream).await;
    let requests = mock.requests();
    let methods: Vec<_> = requests.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "WEBSOCKET"]);
    assert_eq!(requests[0].path, "/v1/responses");
    let create = &requests[1].body;
    assert_eq!(create["type"], "response.create");
    assert_eq!(create["model"], "gpt-5");
    assert_eq!(create["input"][0]["content"][0]["text"], "hello");
    assert_eq!(requests[0].header("originator"), Some("openturn_tests"));
}

#[tokio::test]
async fn completed_ends_the_stream_while_the_provider_keeps_the_body_open() {
    for wire_api in BOTH {
        let reply = simple_text_response("resp_1", "msg_1", "Hello there", 3).held_open_after_end();
        let mock = start_provider(Script::new([reply.into()])).await;
        let provider = mock_provider_info(&mock, wire_api);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        let events = collect(&mut stream).await;
        let last = events.last().cloned();
        assert!(
            matches!(last, Some(Ok(ResponseEvent::Completed { .. }))),
            "{wire_api:?}: {last:?}"
        );
        // The stream ended although the provider never ended the body: nothing waited for EOF.
        assert_eq!(mock.closed_connections(), 0, "{wire_api:?}");
        drop(stream);
        eventually(|| mock.closed_connections() == 1).await;
    }
}

#[tokio::test]
async fn dropping_the_stream_mid_response_closes_the_connection_to_the_provider() {
    for wire_api in BOTH {
        let reply = ResponseBuilder::new("resp_1")
            .created()
            .text_message("msg_1", &["first", "second"])
            .into_reply()
            .with_fault(usize::MAX, Fault::Stall);
        let mock = start_provider(Script::new([reply.into()])).await;
        let provider = mock_provider_info(&mock, wire_api);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        let first = within(stream.next()).await;
        assert!(
            matches!(first, Some(Ok(ResponseEvent::Created { .. }))),
            "{first:?}"
        );
        assert_eq!(mock.closed_connections(), 0);
        drop(stream);
        eventually(|| mock.closed_connections() == 1).await;
    }
}

#[tokio::test]
async fn a_stalled_body_ends_with_the_idle_timeout_of_the_provider() {
    for wire_api in BOTH {
        let reply = ResponseBuilder::new("resp_1")
            .created()
            .text_message("msg_1", &["Hello", " there"])
            .into_reply()
            .with_fault(usize::MAX, Fault::Stall);
        let mock = start_provider(Script::new([reply.into()])).await;
        let mut provider = mock_provider_info(&mock, wire_api);
        provider.stream_idle_timeout_ms = 300;
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        let events = collect(&mut stream).await;
        assert!(events
            .iter()
            .any(|e| matches!(e, Ok(ResponseEvent::OutputItemDone(_)))));
        assert_eq!(
            events.last(),
            Some(&Err(StreamError::IdleTimeout(Duration::from_millis(300)))),
            "{wire_api:?}"
        );
    }
}

#[tokio::test]
async fn a_paced_stream_longer_than_the_idle_timeout_completes() {
    for wire_api in BOTH {
        let reply = simple_text_response("resp_1", "msg_1", "one two three four five six", 6)
            .with_pace(Duration::from_millis(60));
        let mock = start_provider(Script::new([reply.into()])).await;
        let mut provider = mock_provider_info(&mock, wire_api);
        // About 9 frames 60ms apart: the whole response outlasts the limit, no gap does.
        provider.stream_idle_timeout_ms = 300;
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        let events = collect(&mut stream).await;
        assert!(
            matches!(events.last(), Some(Ok(ResponseEvent::Completed { .. }))),
            "{wire_api:?}: {events:?}"
        );
    }
}

#[tokio::test]
async fn a_cut_body_ends_the_stream_with_a_transport_error() {
    for wire_api in BOTH {
        let reply =
            simple_text_response("resp_1", "msg_1", "Hello there", 3).with_fault(400, Fault::Cut);
        let mock = start_provider(Script::new([reply.into()])).await;
        let provider = mock_provider_info(&mock, wire_api);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        let events = collect(&mut stream).await;
        let last = events.last();
        assert!(
            matches!(
                last,
                Some(Err(
                    StreamError::Transport(_) | StreamError::ClosedBeforeCompleted
                ))
            ),
            "{wire_api:?}: {last:?}"
        );
        assert_eq!(
            mock.requests().len(),
            if wire_api == WireApi::Responses { 1 } else { 2 }
        );
    }
}

/// SSE keeps a provider failure until EOF so that a later `completed` wins; WebSocket ends its
/// read loop at the failure.
#[tokio::test]
async fn a_provider_failure_is_saved_over_sse_but_ends_a_websocket_at_once() {
    let events = ResponseBuilder::new("resp_1")
        .created()
        .failed("server_is_overloaded", "busy")
        .completed(Usage::example(), None)
        .into_events();
    let script = Script::new([Reply::sse(events)]);
    let mut outcomes = Vec::new();
    for wire_api in BOTH {
        let mock = start_provider(script.clone()).await;
        let provider = mock_provider_info(&mock, wire_api);
        let mut stream = within(client().stream(&provider, &request(), &context()))
            .await
            .unwrap();
        outcomes.push(collect(&mut stream).await.pop());
    }
    assert!(
        matches!(outcomes[0], Some(Ok(ResponseEvent::Completed { .. }))),
        "{:?}",
        outcomes[0]
    );
    assert_eq!(
        outcomes[1],
        Some(Err(StreamError::Api(ApiError::ServerOverloaded(
            "busy".to_string()
        ))))
    );
}

#[tokio::test]
async fn the_turn_state_header_is_sent_back_on_every_later_request_of_the_turn() {
    for wire_api in BOTH {
        let first = simple_text_response("resp_1", "msg_1", "one", 1)
            .with_header("x-codex-turn-state", "sticky-1");
        let second = simple_text_response("resp_2", "msg_2", "two", 1)
            .with_header("x-codex-turn-state", "other-2");
        let third = simple_text_response("resp_3", "msg_3", "three", 1);
        let mock = start_provider(Script::new([first.into(), second.into(), third.into()])).await;
        let provider = mock_provider_info(&mock, wire_api);
        let context = context();
        for _ in 0..3 {
            let mut stream = within(client().stream(&provider, &request(), &context))
                .await
                .unwrap();
            collect(&mut stream).await;
        }
        let sent: Vec<_> = mock
            .requests()
            .iter()
            .filter(|r| r.method != "WEBSOCKET")
            .map(|r| r.header("x-codex-turn-state").map(str::to_owned))
            .collect();
        let expected = [
            None,
            Some("sticky-1".to_owned()),
            Some("sticky-1".to_owned()),
        ];
        assert_eq!(sent, expected, "{wire_api:?}");
        let fresh_turn = client_support::context();
        assert_eq!(fresh_turn.turn_state.get(), None);
    }
}
