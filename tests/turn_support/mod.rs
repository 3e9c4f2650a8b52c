//! Helpers shared by the turn-engine tests: a daemon with one thread against a scripted mock
//! provider (scripted with `openturn::mock_provider::ResponseBuilder`, re-exported), and
//! assertions over notifications and rollout files.

#![allow(dead_code)]

use std::path::Path;

use serde_json::{json, Value};

use crate::support::*;

/// Scripted provider streams are written with the mock provider's `ResponseBuilder`.
#[allow(unused_imports)]
pub use crate::support::mock_provider::{Fault, ResponseBuilder, SseEvent, SseReply, Usage};

/// A response of one assistant message streamed as `pieces`, completed with a small usage: the
/// reply most scripts end with.
pub fn message_reply(response_id: impl Into<String>, item_id: &str, pieces: &[&str]) -> Reply {
    ResponseBuilder::new(response_id)
        .created()
        .text_message(item_id, pieces)
        .completed(Usage::small(), None)
        .build()
}

/// The server → client request asking to approve a command.
pub const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";

/// A daemon with an initialized connection and one started thread.
pub struct Session {
    pub provider: MockProvider,
    pub home: tempfile::TempDir,
    pub daemon: Daemon,
    pub thread_id: String,
}

/// Starts the daemon against `script` with extra `-c` overrides and `thread/start` params.
pub async fn session(script: Script, extra: &[&str], thread_params: Value) -> Session {
    let provider = MockProvider::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.extend(extra.iter().map(|o| o.to_string()));
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let thread_id = daemon.start_thread(thread_params).await;
    let started = daemon.next_message().await;
    assert_eq!(started["method"], "thread/started");
    Session {
        provider,
        home,
        daemon,
        thread_id,
    }
}

impl Session {
    /// Sends `turn/start` with one text input and returns its response.
    pub async fn start_turn(&mut self, text: &str, extra: Value) -> Value {
        let mut params =
            json!({"threadId": self.thread_id, "input": [{"type": "text", "text": text}]});
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        let response = self.daemon.request("turn/start", params).await;
        assert!(
            response.get("result").is_some(),
            "turn/start failed: {response}"
        );
        response
    }

    /// Runs a turn to its `turn/completed` and returns every message of it.
    pub async fn run_turn(&mut self, text: &str) -> Vec<Value> {
        self.start_turn(text, json!({})).await;
        self.daemon.until_turn_completed().await
    }

    /// The rollout file's lines.
    pub fn rollout(&self) -> Vec<Value> {
        rollout_lines(self.home.path())
    }

    /// Request bodies the provider received, waiting for at least `n`.
    pub async fn bodies(&self, n: usize) -> Vec<Value> {
        let requests = self.provider.wait_for_requests(n, TIMEOUT).await;
        assert!(
            requests.len() >= n,
            "expected {n} requests, got {}",
            requests.len()
        );
        requests.into_iter().map(|r| r.body).collect()
    }

    /// Runs the started turn to its `turn/completed`, answering each command approval request
    /// (at most `max`) with the decision `decide` picks for the request; returns every message.
    pub async fn answer_approvals(
        &mut self,
        max: usize,
        mut decide: impl FnMut(&Value) -> &'static str,
    ) -> Vec<Value> {
        let mut all = Vec::new();
        for _ in 0..max {
            let batch = self
                .daemon
                .collect_until(|m| {
                    m["method"] == COMMAND_APPROVAL || m["method"] == "turn/completed"
                })
                .await;
            let last = batch.last().cloned().unwrap_or_default();
            all.extend(batch);
            if last["method"] == "turn/completed" {
                break;
            }
            let decision = decide(&last);
            self.answer(&last["id"], json!({"decision": decision}))
                .await;
        }
        all
    }

    /// Answers a server → client request.
    pub async fn answer(&mut self, id: &Value, result: Value) {
        self.daemon.send(json!({"id": id, "result": result})).await;
    }
}

pub fn rollout_lines(home: &Path) -> Vec<Value> {
    let files = rollout_files(home);
    assert_eq!(files.len(), 1, "one rollout file expected: {files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Turn items persisted in the rollout.
pub fn rollout_turn_items(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|line| line["type"] == "turn_item")
        .map(|line| line["payload"]["item"].clone())
        .collect()
}

/// Response items persisted in the rollout.
pub fn rollout_response_items(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|line| line["type"] == "response_item")
        .map(|line| line["payload"].clone())
        .collect()
}

/// The params of every message with `method`.
pub fn params_of<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == method)
        .map(|m| &m["params"])
        .collect()
}

/// The `delta` strings of every `method` notification, concatenated.
pub fn joined_deltas(messages: &[Value], method: &str) -> String {
    params_of(messages, method)
        .iter()
        .map(|p| p["delta"].as_str().unwrap_or_default())
        .collect()
}

/// Items of `item/completed` (or `item/started`) notifications with `type`.
pub fn items_of<'a>(messages: &'a [Value], method: &str, item_type: &str) -> Vec<&'a Value> {
    params_of(messages, method)
        .into_iter()
        .map(|p| &p["item"])
        .filter(|item| item["type"] == item_type)
        .collect()
}

/// Exactly one `turn/completed`, last, with `status`; returns its turn object.
pub fn single_turn_end<'a>(messages: &'a [Value], status: &str) -> &'a Value {
    let ends = params_of(messages, "turn/completed");
    assert_eq!(ends.len(), 1, "exactly one turn/completed: {messages:#?}");
    assert_eq!(ends[0]["turn"]["status"], status, "{messages:#?}");
    &ends[0]["turn"]
}

/// The names of the tools a request body offers.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}

/// The `function_call_output` items of a request body.
pub fn call_outputs(body: &Value) -> Vec<(String, String)> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| {
            (
                item["call_id"].as_str().unwrap_or_default().to_string(),
                item["output"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Completes `response` reporting `total` tokens (10 of them output): how a test says how full
/// the provider found the context.
pub fn completed_with_total(response: ResponseBuilder, total: u64) -> Reply {
    let usage = Usage {
        input: total.saturating_sub(10),
        output: 10.min(total),
        total,
        ..Usage::default()
    };
    response.completed(usage, None).build()
}

/// A response of one assistant message streamed as `pieces`, reporting `total` tokens.
pub fn message_with_total(response_id: &str, item_id: &str, pieces: &[&str], total: u64) -> Reply {
    completed_with_total(
        ResponseBuilder::new(response_id)
            .created()
            .text_message(item_id, pieces),
        total,
    )
}

/// Whether a request body offers tools (a summarization request offers none).
pub fn has_tools(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
}

/// The texts of a request body's messages of `role` (`user`, `developer`, `assistant`), in order.
pub fn role_texts(body: &Value, role: &str) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == role)
        .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|piece| piece["text"].as_str().map(str::to_string))
        .collect()
}

/// The texts of a request body's user messages, in order.
pub fn user_texts(body: &Value) -> Vec<String> {
    role_texts(body, "user")
}

/// The texts of a request body's developer messages, in order.
pub fn developer_texts(body: &Value) -> Vec<String> {
    role_texts(body, "developer")
}

/// The texts of a request body's assistant messages, in order.
pub fn assistant_texts(body: &Value) -> Vec<String> {
    role_texts(body, "assistant")
}
