//! Support for the client tests: a provider pointed at the loopback mock, a minimal request, and
//! collecting a response stream with every await bounded.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use openturn::client::{ModelClient, ProviderInfo, RequestContext, ResponseStream, WireApi};
use openturn::mock_provider::{MockProvider, Script};
use openturn::wire::map::{map_frame, FrameOutcome};
use openturn::wire::{ResponseEvent, ResponseItem, ResponsesRequest, StreamError};

/// Bound for every await.
pub const STEP: Duration = Duration::from_secs(10);

/// The transcript shared with the wire unit tests.
pub fn full_response_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/full_response.json")
}

pub fn full_response_script() -> Script {
    Script::from_file(full_response_path()).unwrap()
}

/// A provider for `mock` speaking `wire_api`, without auth or retries unless a test adds them.
pub fn mock_provider_info(mock: &MockProvider, wire_api: WireApi) -> ProviderInfo {
    ProviderInfo {
        id: "mock".to_string(),
        name: "Mock Provider".to_string(),
        base_url: mock.base_url(),
        env_key: None,
        wire_api,
        query_params: BTreeMap::new(),
        http_headers: BTreeMap::new(),
        env_http_headers: BTreeMap::new(),
        api_key_header: None,
        request_max_retries: 0,
        stream_max_retries: 0,
        stream_idle_timeout_ms: 10_000,
        requires_openai_auth: false,
        stored_key_file: None,
    }
}

pub fn request() -> ResponsesRequest {
    ResponsesRequest {
        model: "gpt-5".to_string(),
        instructions: "You are a test.".to_string(),
        input: vec![ResponseItem::user_text("hello")],
        tools: vec![],
        tool_choice: "auto",
        parallel_tool_calls: true,
        reasoning: None,
        store: false,
        stream: true,
        include: vec![],
        prompt_cache_key: Some("thread_1".to_string()),
        text: None,
        service_tier: None,
    }
}

pub fn context() -> RequestContext {
    RequestContext {
        thread_id: "thread_1".to_string(),
        originator: "openturn_tests".to_string(),
        turn_state: Default::default(),
    }
}

/// A model client as the daemon builds one.
pub fn client() -> ModelClient {
    ModelClient::new().unwrap()
}

/// A mock provider serving `script`, started within the step bound.
pub async fn start_provider(script: Script) -> MockProvider {
    within(MockProvider::start(script)).await.unwrap()
}

pub async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(STEP, future)
        .await
        .expect("test step timed out")
}

/// Every item of the stream up to its end.
pub async fn collect(stream: &mut ResponseStream) -> Vec<Result<ResponseEvent, StreamError>> {
    let mut events = Vec::new();
    for _ in 0..100_000 {
        match within(stream.next()).await {
            Some(event) => events.push(event),
            None => return events,
        }
    }
    panic!("stream did not end")
}

/// What a transcript's frames mean one by one, through the pure mapping alone: the reference
/// the transports must reproduce (no framing, no transport policy involved).
pub fn mapped_reference(script: &Script) -> Vec<Result<ResponseEvent, StreamError>> {
    let Some(openturn::mock_provider::Reply::Sse(reply)) = script.replies.front() else {
        panic!("the first reply is not SSE");
    };
    let mut events = Vec::new();
    for event in &reply.events {
        match map_frame(&event.data) {
            FrameOutcome::Event(event) => {
                let done = matches!(event, ResponseEvent::Completed { .. });
                events.push(Ok(event));
                if done {
                    break;
                }
            }
            FrameOutcome::Skip => {}
            other => panic!("the transcript should not fail: {other:?}"),
        }
    }
    events
}

/// Polls `condition` every few milliseconds for at most [`STEP`].
pub async fn eventually(mut condition: impl FnMut() -> bool) {
    within(async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}
