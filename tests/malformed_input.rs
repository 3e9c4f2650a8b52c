//! Bad input gets a JSON-RPC error and the daemon keeps serving (DESIGN.md, server invariants).
//!
//! 10,000 malformed or random lines — random bytes, invalid UTF-8, truncated and mangled
//! requests, JSON that is not a message, unknown methods, wrong params — are interleaved with
//! valid requests. Every valid request must get its result, every bad line exactly one error
//! (id `null` when the line could not be read as a request, the request's id otherwise), and the
//! daemon must still exit cleanly on EOF. The generator is seeded, so a failure reproduces.

#[allow(unused_imports)]
mod support;

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use support::*;

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
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
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
