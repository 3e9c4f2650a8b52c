//! A loopback mock of an OpenAI Responses API provider, for end-to-end
//! tests, the offline `openturn demo` and benchmarks.
//!
//! [`MockProvider::start`] binds `127.0.0.1:0` and serves a [`Script`]: each
//! `POST …/responses` takes the next [`Reply`] (an SSE stream, or any status
//! with a body), and so does each `response.create` message on a WebSocket
//! opened at `…/responses`; `GET …/models` answers the list a test set with
//! [`MockProvider::serve_model_list`] (an empty list until then); anything
//! else is 404.
//! Every request is recorded, with its JSON body parsed, before it is
//! answered; model-list requests apart ([`MockProvider::model_list_requests`]),
//! since a client may list models at any moment and tests index the others. SSE replies can be paced, cut into arbitrary HTTP chunks, cut off
//! or stalled mid-body, or held open after their last event.
//!
//! Layout, along the data path:
//! - `http.rs` — HTTP/1.1 framing (request parsing, chunk encoding).
//! - `server.rs` — accept loop, routing, recording, hang-up detection.
//! - `sse.rs` — writing an SSE body: chunking, pacing, faults, stamps.
//! - `script.rs` — what to answer, and the transcript file format.
//! - `builders.rs` — [`ResponseBuilder`], the one vocabulary for scripting a
//!   streamed response, and whole replies built with it.
//! - `demo_answers.rs` — the built-in `demo` provider's answers, computed from
//!   each request (a [`Responder`]) instead of listed in a script.
//! - `websocket.rs` — the Responses WebSocket mode: `GET …/responses` with
//!   `Upgrade: websocket` on the same listener; each `response.create`
//!   message takes the next reply, whose events go out one message each.
//!
//! This module must not import anything from the rest of the crate: it stands
//! in for a remote provider, so it may only know the wire format.

mod builders;
mod demo_answers;
mod http;
mod recorded;
mod script;
mod server;
mod shared;
mod sse;
#[cfg(test)]
mod tests;
mod websocket;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use builders::{
    error_status, many_deltas, model_list, rate_limited, simple_text_response, split_text,
    stamped_deltas, ResponseBuilder, Usage,
};
pub use demo_answers::{demo_responder, DEMO_COMMAND, DEMO_FILE};
pub use recorded::RecordedRequest;
pub use script::{Chunking, Fault, Reply, Responder, Script, ScriptError, SseEvent, SseReply};
pub use sse::SENT_AT_US_PLACEHOLDER;

use shared::Shared;

/// A running mock provider. Dropping it stops the server (without waiting);
/// [`MockProvider::shutdown`] stops it and waits until every connection task
/// has ended.
#[derive(Debug)]
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    /// The accept loop, which owns the connection tasks. `None` only after
    /// `shutdown` took it.
    server_task: Option<JoinHandle<()>>,
}

impl MockProvider {
    /// Binds 127.0.0.1:0 and starts serving `script` (the replies are taken
    /// in order, one per `POST …/responses` request). Must be called inside a
    /// tokio runtime.
    pub async fn start(script: Script) -> std::io::Result<MockProvider> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(script));
        // A root token of its own: the mock provider is a separate server (a test and demo
        // double of the provider), not part of a daemon connection's lifecycle. It is owned by
        // this value and cancelled when it is stopped or dropped.
        let cancel = CancellationToken::new();
        let server_task = tokio::spawn(server::accept_loop(
            listener,
            Arc::clone(&shared),
            cancel.clone(),
        ));
        tracing::debug!(%addr, "mock provider listening");
        Ok(MockProvider {
            addr,
            shared,
            cancel,
            server_task: Some(server_task),
        })
    }

    /// The bound loopback address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// Waits (bounded by `timeout`) until at least `n` requests arrived and
    /// returns all requests so far; on timeout the result has fewer than `n`.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let mut request_count = self.shared.subscribe_request_count();
        // A timeout is reported through the length of the result, which the
        // caller asserts on anyway.
        let _ = tokio::time::timeout(timeout, request_count.wait_for(|count| *count >= n)).await;
        self.requests()
    }

    /// Number of connections the client closed while a reply was being
    /// written, stalled or held open (proof that a client dropped a stream).
    /// Idle keep-alive connections closing between requests do not count.
    pub fn closed_connections(&self) -> usize {
        self.shared.closed_connections()
    }

    /// Number of TCP connections accepted so far.
    pub fn accepted_connections(&self) -> usize {
        self.shared.accepted_connections()
    }

    /// Answers every later `GET …/models` with `reply`: [`model_list`] for an OpenAI-style
    /// list, any other [`Reply`] for a provider that fails to list.
    pub fn serve_model_list(&self, reply: Reply) {
        self.shared.set_model_list(reply);
    }

    /// Every `GET …/models` received so far, in arrival order.
    pub fn model_list_requests(&self) -> Vec<RecordedRequest> {
        self.shared.model_list_requests()
    }

    /// Adds a reply at the end of the queue.
    pub fn push_reply(&self, reply: Reply) {
        self.shared.push_reply(reply);
    }

    /// Replies still queued (not counting `when_exhausted`).
    pub fn remaining_replies(&self) -> usize {
        self.shared.remaining_replies()
    }

    /// Stops accepting, closes every connection (stalled ones included) and
    /// waits for all server tasks to end.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(server_task) = self.server_task.take() {
            if let Err(error) = server_task.await {
                tracing::warn!(%error, "mock provider task failed");
            }
        }
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
