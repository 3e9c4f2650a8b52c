//! Throughput of the SSE decoder + event mapping over a 20,000-delta transcript, next to plain
//! `serde_json` parsing of the same frames' data (the practical limit: any decoder must at least
//! parse the JSON). Prints a Markdown table.
//!
//! Run: `cargo bench --bench wire_decode`. Each measurement is repeated and the best run is
//! reported, which filters out noise from other processes on a shared machine. Under `cargo test`
//! it reads libtest's arguments (`--list`, a name filter) as one test named `wire_decode`.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use openturn::client::{ModelClient, ProviderInfo, RequestContext};
use openturn::mock_provider::{many_deltas, MockProvider, Reply, Script, SseEvent};
use openturn::wire::map::{map_frame, FrameOutcome};
use openturn::wire::sse::SseEventStream;
use openturn::wire::{ResponseItem, ResponsesRequest};

#[path = "support/libtest_args.rs"]
mod libtest_args;

const DELTAS: usize = 20_000;
const RUNS: usize = 7;
/// A typical socket read size; frames straddle chunk boundaries as they do on the network.
const CHUNK_BYTES: usize = 16 * 1024;

fn render(events: &[SseEvent]) -> Vec<u8> {
    let mut out = Vec::new();
    for event in events {
        if let Some(name) = event.event_name() {
            out.extend_from_slice(format!("event: {name}\n").as_bytes());
        }
        for line in event.data.split('\n') {
            out.extend_from_slice(format!("data: {line}\n").as_bytes());
        }
        out.push(b'\n');
    }
    out
}

/// Best wall time of `RUNS` runs of `run`, which returns how many events it produced.
fn best_of(mut run: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut events = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        events = black_box(run());
        best = best.min(started.elapsed());
    }
    (best, events)
}

fn decode_and_map(runtime: &tokio::runtime::Runtime, chunks: &[Bytes]) -> usize {
    runtime.block_on(async {
        let bytes = futures::stream::iter(chunks.iter().cloned().map(Ok::<Bytes, Infallible>));
        let mut stream = SseEventStream::new(bytes, Duration::from_secs(60));
        let mut events = 0;
        while let Some(event) = stream.next_event().await {
            if event.is_err() {
                panic!("the benchmark transcript must decode cleanly: {event:?}");
            }
            events += 1;
        }
        events
    })
}

/// The whole client path: HTTP over loopback from the mock provider, the decoder task, the
/// mapper task and both channels, as the turn loop consumes it. Returns events received.
fn through_client(runtime: &tokio::runtime::Runtime, reply: &Reply) -> usize {
    runtime.block_on(async {
        let mock = match MockProvider::start(Script::new([reply.clone()])).await {
            Ok(mock) => mock,
            Err(error) => panic!("mock provider: {error}"),
        };
        let mut provider = ProviderInfo::openai();
        provider.base_url = mock.base_url();
        provider.env_key = None;
        let request = ResponsesRequest {
            model: "bench".to_string(),
            instructions: String::new(),
            input: vec![ResponseItem::user_text("go")],
            tools: vec![],
            tool_choice: "auto",
            parallel_tool_calls: false,
            reasoning: None,
            store: false,
            stream: true,
            include: vec![],
            prompt_cache_key: None,
            text: None,
            service_tier: None,
        };
        let client = ModelClient::new().unwrap_or_else(|error| panic!("{error}"));
        let mut stream = client
            .stream(&provider, &request, &RequestContext::default())
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        let mut events = 0;
        while let Some(event) = stream.next().await {
            if let Err(error) = event {
                panic!("the benchmark transcript must stream cleanly: {error}");
            }
            events += 1;
        }
        mock.shutdown().await;
        events
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|arg| arg == "--bench") {
        match libtest_args::mode("wire_decode", &args) {
            libtest_args::Mode::Run => {}
            libtest_args::Mode::List => return libtest_args::print_listing("wire_decode"),
            libtest_args::Mode::Skip => return,
        }
    }
    let reply = many_deltas("resp_bench", "msg_bench", DELTAS, "Hello, wörld 👋 ");
    let body = render(&reply.events);
    let chunks: Vec<Bytes> = body
        .chunks(CHUNK_BYTES)
        .map(Bytes::copy_from_slice)
        .collect();
    let frames: Vec<&str> = reply.events.iter().map(|e| e.data.as_str()).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("no runtime: {error}"),
    };

    let decoded = best_of(|| decode_and_map(&runtime, &chunks));
    let reply_whole = Reply::Sse(
        reply
            .clone()
            .with_chunking(openturn::mock_provider::Chunking::FixedBytes(CHUNK_BYTES)),
    );
    let piped = best_of(|| through_client(&runtime, &reply_whole));
    let mapped = best_of(|| {
        frames
            .iter()
            .filter(|data| matches!(map_frame(data), FrameOutcome::Event(_)))
            .count()
    });
    let value = best_of(|| {
        frames
            .iter()
            .filter(|data| serde_json::from_str::<serde_json::Value>(data).is_ok())
            .count()
    });
    let ignored = best_of(|| {
        frames
            .iter()
            .filter(|data| serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok())
            .count()
    });

    let megabytes = body.len() as f64 / 1_000_000.0;
    println!(
        "{} frames, {:.2} MB of SSE, {} KiB chunks, best of {RUNS} runs\n",
        frames.len(),
        megabytes,
        CHUNK_BYTES / 1024
    );
    println!("| measurement | time (ms) | MB/s | events/s | vs serde_json::Value |");
    println!("|---|---:|---:|---:|---:|");
    let baseline = value.0.as_secs_f64();
    for (name, (elapsed, events)) in [
        ("SSE decode + map (SseEventStream)", decoded),
        ("HTTP loopback → ModelClient → ResponseStream", piped),
        ("map only (map_frame on frame data)", mapped),
        ("serde_json::Value per frame", value),
        ("serde_json IgnoredAny per frame", ignored),
    ] {
        let seconds = elapsed.as_secs_f64();
        println!(
            "| {name} | {:.2} | {:.1} | {:.0} | {:.2}x |",
            seconds * 1000.0,
            megabytes / seconds,
            events as f64 / seconds,
            baseline / seconds
        );
    }
}
