//! Bad input gets a JSON-RPC error and the daemon keeps serving (docs/PROTOCOL.md §2, §12): invalid JSON
//! and invalid UTF-8 → -32700 with `"id": null`; a value that is not a request object, or a
//! request whose `id` is a float, boolean, object or array → -32600;
//! unknown method → -32601; bad params → -32602 naming the field; an oversized line is refused;
//! a full ingress queue → -32001 with a reason; unknown thread and turn ids → the reference's
//! messages.
//!
//! Beside those named cases, a seeded stream of 10,000 malformed or random lines — random bytes,
//! invalid UTF-8, truncated and mangled requests, JSON that is not a message, unknown methods,
//! wrong params — is interleaved with valid requests: every valid request gets its result, every
//! bad line exactly one error (id `null` when the line could not be read as a request, the
//! request's id otherwise), and the daemon still exits cleanly on EOF. The seed makes a failure
//! reproduce.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use support::*;

async fn daemon_with(extra: &[&str]) -> (Daemon, tempfile::TempDir, MockProvider) {
    let provider = MockProvider::start(Script::new(Vec::new())).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&provider);
    overrides.extend(extra.iter().map(|s| s.to_string()));
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    (daemon, home, provider)
}

/// The next message that is an error reply.
async fn next_error(daemon: &mut Daemon) -> Value {
    daemon
        .collect_until(|m| m.get("error").is_some())
        .await
        .pop()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn malformed_lines_get_errors_and_the_daemon_keeps_serving() {
    let (mut daemon, _home, _provider) = daemon_with(&["max_line_bytes=4096"]).await;
    daemon.send_raw(b"{not json\n").await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700);

    daemon
        .send_raw(b"{\"id\":1,\"method\":\"thread/list\xff\xfe\"}\n")
        .await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32700);
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("UTF-8")));

    daemon.send_raw(b"[1,2,3]\n").await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["id"], Value::Null);

    daemon.send_raw(b"{\"id\":\"abc\"}\n").await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["error"]["code"], -32600);
    assert_eq!(error["id"], "abc");

    daemon.send_raw(b"\n   \n").await; // Blank lines are ignored.

    let unknown = daemon.request("nope/x", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    assert!(unknown["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("nope/x")));

    let bad = daemon
        .request(
            "turn/start",
            json!({"threadId": "x", "input": [{"type": "text", "text": 5}]}),
        )
        .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("input[0]")),
        "{bad}"
    );
    let missing = daemon.request("thread/read", json!({})).await;
    assert_eq!(missing["error"]["code"], -32602);
    assert!(missing["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("threadId")));

    let mut huge = b"{\"id\":99,\"method\":\"thread/list\",\"params\":{\"searchTerm\":\"".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 64 * 1024));
    huge.extend_from_slice(b"\"}}\n");
    daemon.send_raw(&huge).await;
    let error = next_error(&mut daemon).await;
    assert_eq!(error["error"]["data"]["reason"], "line_too_long");

    // Omitted params read as {} when every field is optional; a string id is echoed verbatim.
    daemon
        .send(json!({"id": "str-id", "method": "thread/loaded/list"}))
        .await;
    let answer = daemon.response_to(json!("str-id")).await;
    assert_eq!(answer["result"]["data"], json!([]));
    daemon
        .send(json!({"method": "thread/list", "params": {}}))
        .await; // A notification: no reply.
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));
}

/// A request whose `id` cannot be a JSON-RPC id (a float, a boolean, an object, an array, an
/// integer beyond 64 bits) is answered with -32600 and `"id": null`, never with silence: the
/// client is waiting for an answer it would otherwise never get.
#[tokio::test]
async fn a_request_with_an_unusable_id_gets_invalid_request_with_a_null_id() {
    let (mut daemon, _home, _provider) = daemon_with(&[]).await;
    let cases = [
        ("1.5", "a float"),
        ("true", "a boolean"),
        ("{\"n\":1}", "an object"),
        ("[1]", "an array"),
        (
            "18446744073709551615",
            "an integer outside the 64-bit range",
        ),
    ];
    for (id, kind) in cases {
        let line = format!("{{\"id\":{id},\"method\":\"thread/list\",\"params\":{{}}}}\n");
        daemon.send_raw(line.as_bytes()).await;
        let error = next_error(&mut daemon).await;
        assert_eq!(error["id"], Value::Null, "{id}: {error}");
        assert_eq!(error["error"]["code"], -32600, "{id}: {error}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("`id`") && message.contains(kind),
            "{id}: {message}"
        );
    }
    // `id: null` stays a notification (no reply), and the daemon keeps serving.
    daemon
        .send_raw(b"{\"id\":null,\"method\":\"thread/list\",\"params\":{}}\n")
        .await;
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));
    assert!(
        daemon
            .transcript
            .iter()
            .filter(|m| m.get("error").is_some())
            .count()
            == cases.len(),
        "exactly one error per bad id: {:#?}",
        daemon.transcript
    );
}

#[tokio::test]
async fn unknown_thread_and_turn_ids_get_the_reference_messages() {
    let (mut daemon, _home, _provider) = daemon_with(&[]).await;
    let unknown = uuid::Uuid::now_v7().to_string();
    let input = json!([{"type": "text", "text": "hi"}]);
    let error = daemon
        .err("turn/start", json!({"threadId": unknown, "input": input}))
        .await;
    assert_eq!(error["message"], format!("thread not found: {unknown}"));
    let error = daemon
        .err(
            "turn/start",
            json!({"threadId": "not-a-uuid", "input": input}),
        )
        .await;
    assert!(error["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("invalid thread id: ")));
    let error = daemon
        .err("thread/resume", json!({"threadId": unknown}))
        .await;
    assert_eq!(
        error["message"],
        format!("no rollout found for thread id {unknown}")
    );
    let thread = daemon.start_thread(json!({})).await;
    let error = daemon
        .err("turn/interrupt", json!({"threadId": thread, "turnId": "t"}))
        .await;
    assert_eq!(error["message"], "no active turn to interrupt");
    let error = daemon
        .err(
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": "t", "input": input}),
        )
        .await;
    assert_eq!(error["message"], "no active turn to steer");
}

#[tokio::test]
async fn a_full_ingress_queue_is_refused_as_overloaded_and_every_request_is_answered_once() {
    let (mut daemon, _home, _provider) = daemon_with(&["ingress_queue_capacity=1"]).await;
    let mut burst = Vec::new();
    for id in 1000..1200 {
        let line = json!({"id": id, "method": "thread/list", "params": {}});
        burst.extend(serde_json::to_vec(&line).unwrap_or_default());
        burst.push(b'\n');
    }
    daemon.send_raw(&burst).await;
    let mut answered = std::collections::BTreeSet::new();
    let mut overloaded = 0;
    while answered.len() < 200 {
        let message = daemon.next_message().await;
        let Some(id) = message["id"].as_i64() else {
            continue;
        };
        assert!(answered.insert(id), "answered twice: {message}");
        if let Some(error) = message.get("error") {
            assert_eq!(error["code"], -32001);
            assert_eq!(error["message"], "Server overloaded; retry later.");
            assert_eq!(error["data"]["reason"], "ingress_queue_full");
            overloaded += 1;
        }
    }
    assert!(
        overloaded > 0,
        "a 200-request burst into a queue of 1 was never refused"
    );
    let list = daemon.ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));
}

// The seeded stream of bad lines.

const BAD_LINES: usize = 10_000;
/// A valid request after every this many bad lines.
const BAD_PER_VALID: usize = 25;
const SEED: u64 = 0x6f70_656e_7475_726e;

/// What the daemon must answer to one bad line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expected {
    /// An error whose id is `null` and whose code is this.
    NullIdError(i64),
    /// An error carrying the line's own (string) id and this code.
    IdError(i64),
}

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// One random bad line (never containing '\n', never blank) and the answer it must get.
fn bad_line(rng: &mut StdRng, index: usize) -> (Vec<u8>, Expected) {
    let id = format!("bad-{index}");
    match rng.gen_range(0..9) {
        0 => {
            // Random bytes, mostly invalid UTF-8; the leading '#' keeps it from being blank or JSON.
            let mut bytes = vec![b'#'];
            let len = rng.gen_range(0..200);
            bytes.extend(
                (0..len)
                    .map(|_| rng.gen_range(0..=255u8))
                    .filter(|b| *b != b'\n'),
            );
            (bytes, Expected::NullIdError(PARSE_ERROR))
        }
        1 => {
            // A valid request cut short.
            let full =
                json!({"id": id, "method": "thread/start", "params": {"model": "x"}}).to_string();
            let cut = rng.gen_range(1..full.len() - 1);
            (
                full.as_bytes()[..cut].to_vec(),
                Expected::NullIdError(PARSE_ERROR),
            )
        }
        2 => {
            // Printable garbage with JSON punctuation.
            let alphabet = b"{}[]\":,0123456789abcdefnulltrue \\";
            let mut bytes = vec![b'{'];
            let len = rng.gen_range(1..80);
            bytes.extend((0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())]));
            bytes.push(b'\x01');
            (bytes, Expected::NullIdError(PARSE_ERROR))
        }
        3 => {
            // Well-formed JSON that is not a message object.
            let choices = [
                "[]",
                "[1,2,3]",
                "42",
                "\"text\"",
                "true",
                "null",
                "{}",
                "{\"params\":{}}",
            ];
            let line = choices[rng.gen_range(0..choices.len())];
            (
                line.as_bytes().to_vec(),
                Expected::NullIdError(INVALID_REQUEST),
            )
        }
        4 => {
            let line =
                json!({"id": id, "method": format!("no/such/method{}", rng.gen_range(0..1000))});
            (
                line.to_string().into_bytes(),
                Expected::IdError(METHOD_NOT_FOUND),
            )
        }
        5 => {
            // turn/start without its required fields, or with wrong types.
            let params = match rng.gen_range(0..3) {
                0 => json!({}),
                1 => json!({"threadId": 7, "input": []}),
                _ => json!({"threadId": "t", "input": [{"type": "text", "text": 5}]}),
            };
            let line = json!({"id": id, "method": "turn/start", "params": params});
            (
                line.to_string().into_bytes(),
                Expected::IdError(INVALID_PARAMS),
            )
        }
        6 => {
            // An id but neither method, result nor error.
            let line = json!({"id": id, "params": {"x": 1}});
            (
                line.to_string().into_bytes(),
                Expected::IdError(INVALID_REQUEST),
            )
        }
        7 => {
            // A request whose params are not an object.
            let line = json!({"id": id, "method": "thread/start", "params": "not an object"});
            (
                line.to_string().into_bytes(),
                Expected::IdError(INVALID_PARAMS),
            )
        }
        _ => {
            // Trailing junk after a valid request.
            let line = format!("{{\"id\":\"{id}\",\"method\":\"thread/start\"}} trailing");
            (line.into_bytes(), Expected::NullIdError(PARSE_ERROR))
        }
    }
}

#[tokio::test]
async fn every_malformed_line_gets_one_error_and_every_valid_request_its_answer() {
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &[]);
    daemon.initialize().await;
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut expected_null: HashMap<i64, usize> = HashMap::new();
    let mut expected_by_id: HashMap<String, i64> = HashMap::new();
    let mut valid_ids = Vec::new();
    for index in 0..BAD_LINES {
        let (mut line, expected) = bad_line(&mut rng, index);
        assert!(!line.contains(&b'\n'));
        line.push(b'\n');
        daemon.send_raw(&line).await;
        match expected {
            Expected::NullIdError(code) => *expected_null.entry(code).or_default() += 1,
            Expected::IdError(code) => {
                expected_by_id.insert(format!("bad-{index}"), code);
            }
        }
        if index % BAD_PER_VALID == BAD_PER_VALID - 1 {
            // Waiting for each valid answer keeps the ingress queue from filling, so "overloaded"
            // never stands in for a real answer.
            let id = format!("ok-{index}");
            daemon
                .send(json!({"id": id, "method": "thread/start", "params": {"ephemeral": true}}))
                .await;
            let answer = daemon.response_to(json!(id)).await;
            assert!(
                answer["result"]["thread"]["id"].is_string(),
                "valid request {id} got {answer}"
            );
            valid_ids.push(id);
        }
    }
    // A final valid request: every error for the lines before it has been written by then,
    // because bad lines are answered in order by the reader before it queues this request.
    let answer = daemon
        .request("thread/start", json!({"ephemeral": true}))
        .await;
    assert!(answer["result"]["thread"]["id"].is_string(), "{answer}");
    daemon.close_stdin();
    assert_eq!(
        daemon.wait_exit().await,
        Some(0),
        "daemon did not exit cleanly"
    );

    let mut null_errors: HashMap<i64, usize> = HashMap::new();
    let mut id_errors: HashMap<String, i64> = HashMap::new();
    for message in &daemon.transcript {
        let Some(error) = message.get("error") else {
            continue;
        };
        let code = error["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("error without code: {message}"));
        match &message["id"] {
            Value::Null => *null_errors.entry(code).or_default() += 1,
            Value::String(id) => {
                let previous = id_errors.insert(id.clone(), code);
                assert!(previous.is_none(), "two errors for {id}");
            }
            other => panic!("error with unexpected id {other}: {message}"),
        }
    }
    assert_eq!(null_errors, expected_null, "errors with id null, by code");
    assert_eq!(id_errors, expected_by_id, "errors with the request's id");
    assert_eq!(valid_ids.len(), BAD_LINES / BAD_PER_VALID);
}
