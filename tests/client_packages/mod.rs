//! The scenarios the client packages (`clients/python`, `clients/typescript`) are tested
//! against, and the runner that hands them to the package's own test suite.
//!
//! Each scenario gets a mock provider of its own, so the suites' tests neither depend on their
//! order nor on each other's failures (node runs test files in parallel). The suite receives
//! `OPENTURN_BIN` (the binary under test) and `OPENTURN_TEST_PROVIDERS` (a JSON object: scenario
//! name → base URL). After the suite ran, [`check_scenarios`] asserts that every scripted reply
//! was consumed — a test that was skipped or stopped early leaves replies behind — and that
//! the requests carried what the client sent (tool output, steer input, resumed history).

#![allow(dead_code)]

pub mod readme_examples;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::*;
use crate::turn_support::*;

/// Text every `say` scenario's model writes, split into four deltas.
pub const GREETING: [&str; 4] = ["Hello", " from", " open", "turn"];

/// Scenario name → its running provider.
pub struct Scenarios {
    pub providers: BTreeMap<&'static str, MockProvider>,
}

fn say(id: &str, pieces: &[&str]) -> Reply {
    message_reply(id, &format!("msg_{id}"), pieces)
}

/// Starts one provider per scenario.
pub async fn start_scenarios() -> Scenarios {
    let paced = |reply: Reply, ms: u64| match reply {
        Reply::Sse(sse) => Reply::Sse(sse.with_pace(Duration::from_millis(ms))),
        other => other,
    };
    let scripts: Vec<(&'static str, Vec<Reply>)> = vec![
        // A turn streamed as deltas; the thread is then read and listed.
        ("stream", vec![say("r1", &GREETING)]),
        // A turn in one daemon, then `thread/resume` in a second daemon and another turn.
        (
            "resume",
            vec![say("r1", &["first answer"]), say("r2", &["second answer"])],
        ),
        // The model asks to run a command; the test's approval handler accepts it.
        (
            "approval_accept",
            vec![
                ResponseBuilder::new("r1")
                    .created()
                    .exec_call(
                        "fc_1",
                        "call_accept",
                        // Escalated: under the default read-only sandbox only a command
                        // run outside it can write, and that is what is approved.
                        json!({"cmd": "echo approved > approved.txt", "login": false,
                               "sandbox_permissions": "require_escalated"}),
                    )
                    .completed(Usage::small(), None)
                    .build(),
                say("r2", &["done"]),
            ],
        ),
        // The same request with the client's default handler, which declines.
        (
            "approval_default",
            vec![
                ResponseBuilder::new("r1")
                    .created()
                    .exec_call(
                        "fc_1",
                        "call_default",
                        json!({"cmd": "echo ran > declined.txt", "login": false,
                               "sandbox_permissions": "require_escalated"}),
                    )
                    .completed(Usage::small(), None)
                    .build(),
                say("r2", &["not run"]),
            ],
        ),
        // A client tool (`dynamicTools`) called by the model and answered by the test's handler.
        (
            "client_tool",
            vec![
                ResponseBuilder::new("r1")
                    .created()
                    .function_call_json(
                        "fc_1",
                        "call_tool",
                        "lookup_ticket",
                        json!({"id": "ABC-123"}),
                    )
                    .completed(Usage::small(), None)
                    .build(),
                say("r2", &["the ticket is open"]),
            ],
        ),
        // A slow turn the test interrupts.
        (
            "interrupt",
            vec![paced(
                say("r1", &["one ", "two ", "three ", "four ", "five ", "six "]),
                1000,
            )],
        ),
        // A slow turn the test steers; the steer input goes out with the follow-up request.
        (
            "steer",
            vec![
                paced(say("r1", &["a ", "b ", "c ", "d "]), 500),
                say("r2", &["steered"]),
            ],
        ),
        // The provider fails: the turn ends `failed` with an error, the daemon keeps serving.
        (
            "provider_error",
            vec![Reply::status(400, r#"{"error":{"message":"bad model"}}"#)],
        ),
    ];
    let mut providers = BTreeMap::new();
    for (name, replies) in scripts {
        let provider = MockProvider::start(Script::new(replies)).await.unwrap();
        providers.insert(name, provider);
    }
    Scenarios { providers }
}

impl Scenarios {
    /// `{"stream": "http://127.0.0.1:PORT/v1", …}`
    pub fn providers_json(&self) -> String {
        let map: BTreeMap<&str, String> = self
            .providers
            .iter()
            .map(|(name, provider)| (*name, provider.base_url()))
            .collect();
        serde_json::to_string(&map).unwrap()
    }

    fn bodies(&self, name: &str) -> Vec<Value> {
        self.providers[name]
            .requests()
            .into_iter()
            .filter(|request| request.path.ends_with("/responses"))
            .map(|request| request.body)
            .collect()
    }
}

/// The interpreter or tool a suite needs, from `var`; `None` means skip. Under `CI=true` a
/// missing one fails instead, so CI can never silently stop running a client suite.
pub fn tool_from_env(var: &str, what: &str) -> Option<std::ffi::OsString> {
    match std::env::var_os(var) {
        Some(value) => Some(value),
        None => {
            assert!(
                std::env::var("CI").map(|v| v != "true").unwrap_or(true),
                "CI=true but {var} is not set: scripts/test must install {what}"
            );
            eprintln!("skipping: set {var} ({what}); scripts/test does");
            None
        }
    }
}

/// Runs `command` (the suite) with the scenario environment, bounded in time.
pub async fn run_suite(
    mut command: std::process::Command,
    scenarios: &Scenarios,
    limit: Duration,
) -> Output {
    command
        .env("OPENTURN_BIN", openturn_bin())
        .env("OPENTURN_TEST_PROVIDERS", scenarios.providers_json())
        .env_remove("OPENAI_API_KEY");
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let output = tokio::time::timeout(limit, command.output())
        .await
        .unwrap_or_else(|_| panic!("the client suite ran longer than {limit:?}"))
        .expect("starting the client suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client suite failed:\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // Shown with `cargo test -- --nocapture`; the suite's own summary line is in it.
    println!("{stdout}");
    output
}

/// What every scenario's requests must show after the suite passed.
pub fn check_scenarios(scenarios: &Scenarios) {
    for (name, provider) in &scenarios.providers {
        assert_eq!(
            provider.remaining_replies(),
            0,
            "scenario `{name}` left replies unused: its test did not run to the end"
        );
    }
    let resume = scenarios.bodies("resume");
    assert_eq!(resume.len(), 2);
    assert!(
        resume[1]["input"].to_string().contains("first answer"),
        "the resumed thread's turn must send the first turn's history: {}",
        resume[1]["input"]
    );
    let tool = scenarios.bodies("client_tool");
    assert_eq!(
        call_outputs(&tool[1]),
        vec![(
            "call_tool".to_string(),
            "ticket ABC-123 is open".to_string()
        )],
        "the client tool's answer goes back to the model"
    );
    let declined = scenarios.bodies("approval_default");
    let outputs = call_outputs(&declined[1]);
    assert_eq!(outputs.len(), 1);
    assert!(
        !outputs[0].1.contains("ran"),
        "a declined command must not run: {outputs:?}"
    );
    let steer = scenarios.bodies("steer");
    assert_eq!(steer.len(), 2);
    assert!(
        steer[1]["input"]
            .to_string()
            .contains("please also say steered"),
        "the steer input goes out with the next request: {}",
        steer[1]["input"]
    );
}

/// The package folder, e.g. `clients/python`.
pub fn package_dir(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}
