//! The state the mock provider's handle and its connection tasks share: the recorded requests
//! and the replies still to give. Its own file, because the HTTP and WebSocket servers both use it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use super::recorded::RecordedRequest;
use super::script::{Reply, Responder, Script};

/// State shared between the handle and the connection tasks. Plain mutexes
/// suffice: every critical section is a push or a pop, never held across an
/// await.
#[derive(Debug)]
pub(super) struct Shared {
    requests: Mutex<Vec<RecordedRequest>>,
    /// Mirrors `requests.len()` so waiters can sleep until a count is reached.
    request_count: watch::Sender<usize>,
    replies: Mutex<VecDeque<Reply>>,
    responder: Option<Responder>,
    when_exhausted: Option<Reply>,
    /// The answer to every `GET …/models`; an empty list until a test sets one.
    model_list: Mutex<Reply>,
    /// The `GET …/models` requests, kept apart from `requests`: a client may list models at
    /// any moment, and tests count and index the Responses requests.
    model_list_requests: Mutex<Vec<RecordedRequest>>,
    closed_connections: AtomicUsize,
    accepted_connections: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not hide the recorded data from the rest
    // of the test, so poisoning is ignored.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(super) fn new(script: Script) -> Shared {
        Shared {
            requests: Mutex::new(Vec::new()),
            request_count: watch::Sender::new(0),
            replies: Mutex::new(script.replies),
            responder: script.responder,
            when_exhausted: script.when_exhausted,
            model_list: Mutex::new(Reply::status(200, r#"{"object":"list","data":[]}"#)),
            model_list_requests: Mutex::new(Vec::new()),
            closed_connections: AtomicUsize::new(0),
            accepted_connections: AtomicUsize::new(0),
        }
    }

    pub(super) fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    pub(super) fn subscribe_request_count(&self) -> watch::Receiver<usize> {
        self.request_count.subscribe()
    }

    pub(super) fn record(&self, request: RecordedRequest) {
        let mut requests = lock(&self.requests);
        requests.push(request);
        let count = requests.len();
        // Updated under the lock so a waiter that sees `count` also sees the
        // request when it reads the list.
        self.request_count.send_replace(count);
    }

    pub(super) fn set_model_list(&self, reply: Reply) {
        *lock(&self.model_list) = reply;
    }

    /// Records a `GET …/models` and returns its answer.
    pub(super) fn answer_model_list(&self, request: RecordedRequest) -> Reply {
        lock(&self.model_list_requests).push(request);
        lock(&self.model_list).clone()
    }

    pub(super) fn model_list_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.model_list_requests).clone()
    }

    pub(super) fn push_reply(&self, reply: Reply) {
        lock(&self.replies).push_back(reply);
    }

    pub(super) fn remaining_replies(&self) -> usize {
        lock(&self.replies).len()
    }

    /// The reply to `request`: the next queued one, else the responder's, else the
    /// reply for an exhausted script.
    pub(super) fn next_reply(&self, request: &RecordedRequest) -> Option<Reply> {
        let next = lock(&self.replies).pop_front();
        next.or_else(|| {
            self.responder
                .as_ref()
                .map(|responder| responder.reply(request))
        })
        .or_else(|| self.when_exhausted.clone())
    }

    /// The reply the next request would get, without taking it; `None` when a
    /// responder would compute it (a WebSocket handshake has no body to answer).
    pub(super) fn peek_reply(&self) -> Option<Reply> {
        let front = lock(&self.replies).front().cloned();
        match &self.responder {
            Some(_) => front,
            None => front.or_else(|| self.when_exhausted.clone()),
        }
    }

    pub(super) fn closed_connections(&self) -> usize {
        self.closed_connections.load(Ordering::SeqCst)
    }

    pub(super) fn accepted_connections(&self) -> usize {
        self.accepted_connections.load(Ordering::SeqCst)
    }

    pub(super) fn connection_accepted(&self) {
        self.accepted_connections.fetch_add(1, Ordering::SeqCst);
    }

    pub(super) fn note_client_closed(&self) {
        self.closed_connections.fetch_add(1, Ordering::SeqCst);
    }
}
