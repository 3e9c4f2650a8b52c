//! A client that stops reading stdout must not make the daemon buffer without bound, and must
//! lose nothing: docs/ARCHITECTURE.md §2 "a slow client never makes the daemon's memory grow without bound",
//! and "notifications for a turn keep the order core emitted them".
//!
//! This test drives the real binary through a raw pipe (the shared `Daemon` helper reads stdout
//! eagerly, which is exactly what must not happen here). It stops reading as soon as it has sent
//! `turn/start` — before that request's response, `turn/started` or any delta — and stays away
//! for five seconds while a turn streams in; then it reads everything and checks that the
//! response and every delta arrive, complete and in order, followed by the turn's end, that the
//! daemon's peak RSS (VmHWM from /proc) grew by less than [`PEAK_GROWTH_LIMIT_KIB`] over what it
//! used before the turn, and that EOF still ends the daemon cleanly.
//!
//! The turn must be far larger than everything the daemon's bounded queues can hold together
//! (the outgoing queue alone takes 256 bursts of up to 32 KiB, 8 MiB), or a daemon that queued
//! without bound would pass too: its notifications total about 128 MiB (32,768 deltas of 4 KiB),
//! nearly three times the limit, so a daemon holding the turn's traffic instead of waiting breaks
//! it. The completed message carries a short text: the item's text is kept in history, and what
//! is measured here is what the streaming path holds, not what history holds.
//!
//! The growth is measured, not the whole RSS: the daemon's RSS before the turn is mostly its own
//! (debug) binary, which grows with every feature and says nothing about buffering. An absolute
//! 72 MiB limit failed once in CI at 73,788 KiB with nothing queued without bound.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use support::raw_pipes::{read_json, send, start_thread};
use support::*;
use tokio::io::BufReader;
use tokio::process::Command;

const DELTAS: usize = 32 * 1024;
const DELTA_BYTES: usize = 4 * 1024;
const PAUSE: Duration = Duration::from_secs(5);
/// How much the daemon's peak RSS may grow over its RSS before the turn. While the client is
/// away the bounded queues fill (about 15 MiB: the outgoing queue, the thread's events, the HTTP
/// body's buffers); once it reads again, the stream runs at full speed through two worker
/// threads, and glibc's per-thread arenas each keep their own high-water mark, so the growth
/// measured about 30–33 MiB (about 19 MiB with `MALLOC_ARENA_MAX=1`). A daemon that queued the
/// turn instead of waiting would grow by about 128 MiB.
const PEAK_GROWTH_LIMIT_KIB: u64 = 48 * 1024;

/// The peak RSS so far (`VmHWM`) of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"))
}

/// Delta `index`: its index, then filler up to [`DELTA_BYTES`], so order and completeness are
/// checkable from the text alone.
fn numbered_delta(index: usize) -> String {
    let mut delta = format!("{index:08} ");
    delta.extend(std::iter::repeat_n('x', DELTA_BYTES - delta.len()));
    delta
}

/// created, one message streamed as [`DELTAS`] numbered deltas, completed.
fn large_turn() -> mock_provider::SseReply {
    let item = json!({"id": "msg_slow", "type": "message", "role": "assistant", "content": []});
    let mut builder = mock_provider::ResponseBuilder::new("resp_slow")
        .created()
        .event(json!({"type": "response.output_item.added", "output_index": 0, "item": item}));
    for index in 0..DELTAS {
        builder = builder.event(
            json!({"type": "response.output_text.delta", "item_id": "msg_slow",
            "output_index": 0, "content_index": 0, "delta": numbered_delta(index)}),
        );
    }
    let mut done = item;
    done["content"] = json!([{"type": "output_text", "text": "streamed", "annotations": []}]);
    builder
        .event(json!({"type": "response.output_item.done", "output_index": 0, "item": done}))
        .completed(mock_provider::Usage::example(), None)
        .into_reply()
}

#[tokio::test]
async fn a_client_that_stops_reading_for_five_seconds_loses_nothing_and_daemon_memory_stays_bounded(
) {
    let reply = large_turn();
    let provider = MockProvider::start(Script::new([Reply::Sse(reply)]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(openturn_bin());
    for o in mock_overrides(&provider) {
        command.arg("-c").arg(o);
    }
    let mut child = command
        .arg("app-server")
        .env("OPENTURN_HOME", home.path())
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let pid = child.id().expect("no pid");
    let mut stdin = child.stdin.take().expect("no stdin");
    // A small buffer, so our own reader holds little while paused.
    let mut stdout = BufReader::with_capacity(4096, child.stdout.take().expect("no stdout"));

    let thread_id = start_thread(&mut stdin, &mut stdout, json!({})).await;
    let before_turn = peak_rss_kib(pid);
    send(&mut stdin, json!({"id": 3, "method": "turn/start", "params": {"threadId": thread_id, "input": [{"type": "text", "text": "stream"}]}})).await;

    // Stop reading with the whole turn still ahead: its response, its notifications and every
    // delta queue up behind a client that reads nothing.
    tokio::time::sleep(PAUSE).await;

    let mut delta_count = 0usize;
    let mut turn_start_answered = false;
    let mut completed = None;
    for _ in 0..DELTAS + 1_000 {
        let message = read_json(&mut stdout).await;
        if message["id"] == 3 && message.get("method").is_none() {
            assert!(message["result"]["turn"]["id"].is_string(), "{message}");
            turn_start_answered = true;
            continue;
        }
        match message["method"].as_str() {
            Some("item/agentMessage/delta") => {
                let delta = message["params"]["delta"].as_str().unwrap_or_default();
                assert!(
                    delta == numbered_delta(delta_count),
                    "delta {delta_count} lost, duplicated or reordered: got {:?}",
                    delta.get(..8)
                );
                delta_count += 1;
            }
            Some("turn/completed") => {
                completed = Some(message);
                break;
            }
            _ => {}
        }
    }
    assert!(turn_start_answered, "turn/start was never answered");
    let completed = completed.expect("no turn/completed");
    assert_eq!(completed["params"]["turn"]["status"], "completed");
    assert_eq!(delta_count, DELTAS);
    let peak = peak_rss_kib(pid);
    let growth = peak.saturating_sub(before_turn);
    assert!(
        growth < PEAK_GROWTH_LIMIT_KIB,
        "daemon peak RSS grew by {growth} KiB during the turn ({before_turn} KiB before, \
         {peak} KiB at the peak), over {PEAK_GROWTH_LIMIT_KIB} KiB"
    );

    drop(stdin);
    let status = tokio::time::timeout(TIMEOUT, child.wait())
        .await
        .expect("daemon did not exit on EOF")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}
