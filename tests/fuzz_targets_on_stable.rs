//! The fuzz targets' checks (fuzz/src/checks.rs) on stable: seeded generated inputs — valid
//! seeds mutated by byte flips, insertions, deletions, cuts and splices, plus raw random bytes —
//! through the JSON-RPC line path and the rollout reader. Invariants: no panic, line framing
//! accounts for every byte, a rollout that parses has no more items than lines.
//! `scripts/fuzz` runs the same checks under libFuzzer where nightly is available.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

#[path = "../fuzz/src/checks.rs"]
mod checks;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CASES: usize = 20_000;

const JSONRPC_SEEDS: &[&str] = &[
    r#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"x","version":"1"},"capabilities":{"optOutNotificationMethods":["a"]}}}"#,
    r#"{"jsonrpc":"2.0","id":"s","method":"thread/start","params":{"model":"gpt-5","config":{"a.b":1},"ephemeral":true}}"#,
    r#"{"id":3,"method":"turn/start","params":{"threadId":"t","input":[{"type":"text","text":"hi"},{"type":"image","url":"u"}]}}"#,
    r#"{"id":4,"method":"turn/interrupt","params":{"threadId":"t","turnId":"u"}}"#,
    r#"{"id":5,"method":"turn/steer","params":{"threadId":"t","expectedTurnId":"u","input":[]}}"#,
    r#"{"id":6,"method":"thread/resume","params":{"threadId":"t"}}"#,
    r#"{"id":7,"result":{"decision":"accept"}}"#,
    r#"{"id":8,"error":{"code":-1,"message":"no"}}"#,
    r#"{"method":"initialized"}"#,
    r#"{"id":null,"method":"x"}"#,
    r#"{"id":1.5,"method":"thread/start"}"#,
    "[1,2,3]",
    "\"\\ud800\"",
];

const ROLLOUT_SEED: &str = concat!(
    r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"t1","created_at":1,"cwd":"/","model":"gpt-5","model_provider":"mock","originator":null,"cli_version":"0.1.0"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.001Z","type":"turn_started","payload":{"turn_id":"u1","started_at":1}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.002Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.003Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.004Z","type":"turn_item","payload":{"turn_id":"u1","item":{"type":"agentMessage","id":"m","text":"yo"}}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.005Z","type":"turn_ended","payload":{"turn_id":"u1","status":"completed","completed_at":2}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.006Z","type":"thread_name","payload":{"name":"n"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-01T00:00:00.007Z","type":"future_kind","payload":{}}"#,
    "\n",
);

/// One mutation of `input`, in place.
fn mutate(rng: &mut StdRng, input: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    const INTERESTING: &[&[u8]] = &[
        b"\n",
        b"\r\n",
        b"\"",
        b"\\",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"null",
        b"-1",
        b"9223372036854775808",
        b"1e999",
        b"\xff",
        b"\xe2\x80\xa8",
        b"\\u0000",
        b"\\ud800",
    ];
    let len = input.len();
    match rng.gen_range(0..7) {
        0 if len > 0 => {
            let at = rng.gen_range(0..len);
            input[at] ^= 1 << rng.gen_range(0..8);
        }
        1 => {
            let at = rng.gen_range(0..=len);
            let piece = INTERESTING[rng.gen_range(0..INTERESTING.len())];
            input.splice(at..at, piece.iter().copied());
        }
        2 if len > 0 => {
            let start = rng.gen_range(0..len);
            let end = rng.gen_range(start..=len.min(start + 16));
            input.drain(start..end);
        }
        3 if len > 0 => input.truncate(rng.gen_range(0..len)),
        4 => {
            let other = &seeds[rng.gen_range(0..seeds.len())];
            let at = rng.gen_range(0..=len);
            let from = rng.gen_range(0..=other.len());
            input.splice(at..at, other[from..].iter().copied());
        }
        5 if len > 0 => {
            let at = rng.gen_range(0..len);
            input[at] = rng.gen();
        }
        _ => input.extend_from_slice(b"\n"),
    }
}

/// A generated input: mostly mutated seeds, sometimes raw random bytes.
fn generate(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if rng.gen_ratio(1, 10) {
        let len = rng.gen_range(0..512);
        return (0..len).map(|_| rng.gen()).collect();
    }
    let mut input = seeds[rng.gen_range(0..seeds.len())].clone();
    for _ in 0..rng.gen_range(0..8) {
        mutate(rng, &mut input, seeds);
    }
    input
}

#[test]
fn jsonrpc_line_path_survives_generated_inputs_and_frames_every_byte() {
    let seeds: Vec<Vec<u8>> = JSONRPC_SEEDS
        .iter()
        .map(|seed| seed.as_bytes().to_vec())
        .chain([JSONRPC_SEEDS.join("\n").into_bytes(), vec![b'x'; 300]])
        .collect();
    let mut rng = StdRng::seed_from_u64(0x6a73_6f6e_7270_6331);
    for seed in &seeds {
        checks::jsonrpc_line(seed);
    }
    for _ in 0..CASES {
        let input = generate(&mut rng, &seeds);
        checks::jsonrpc_line(&input);
    }
}

#[test]
fn rollout_reader_survives_generated_files() {
    let whole = ROLLOUT_SEED.as_bytes().to_vec();
    let mut seeds: Vec<Vec<u8>> = ROLLOUT_SEED
        .lines()
        .map(|line| format!("{line}\n").into_bytes())
        .collect();
    seeds.push(whole.clone());
    checks::rollout_reader(&whole);
    let mut rng = StdRng::seed_from_u64(0x726f_6c6c_6f75_7431);
    for _ in 0..CASES {
        let input = generate(&mut rng, &seeds);
        checks::rollout_reader(&input);
    }
}
