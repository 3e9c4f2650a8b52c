//! Helpers for the `openturn exec` tests: run the real binary against the loopback mock provider,
//! capture stdout, stderr and the exit code, and check every `--json` line against
//! `docs/exec-events.schema.json` (the documented contract) and the order every run must keep.

#![allow(dead_code)]

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::support::*;

const EVENTS_SCHEMA: &str = include_str!("../../docs/exec-events.schema.json");

/// What one `openturn exec` run left behind.
#[derive(Debug)]
pub struct ExecRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl ExecRun {
    /// The `--json` events, each checked against the schema, in order.
    pub fn events(&self) -> Vec<Value> {
        let events: Vec<Value> = self
            .stdout
            .lines()
            .map(|line| {
                let event: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}\n{self:#?}"));
                check_event(&event);
                event
            })
            .collect();
        check_order(&events);
        events
    }
}

/// An `openturn exec` command against `provider`, with `OPENTURN_HOME=home`.
pub fn exec_command(home: &Path, provider: &MockProvider, args: &[&str]) -> Command {
    let mut command = Command::new(openturn_bin());
    command.arg("exec");
    for o in mock_overrides(provider) {
        command.arg("-c").arg(o);
    }
    command
        .args(args)
        .env("OPENTURN_HOME", home)
        .env("OPENTURN_TEST_KEY", "sk-test-secret-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Runs `command` with `stdin` as its input, to its exit.
pub async fn run_exec(mut command: Command, stdin: &str) -> ExecRun {
    let mut child = command.spawn().expect("spawn");
    let mut input = child.stdin.take().expect("no stdin");
    input.write_all(stdin.as_bytes()).await.expect("stdin");
    drop(input);
    let output = tokio::time::timeout(TIMEOUT, child.wait_with_output())
        .await
        .expect("openturn exec did not exit in time")
        .expect("wait");
    ExecRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `openturn exec ARGS` against `provider` with `stdin`.
pub async fn exec(home: &Path, provider: &MockProvider, args: &[&str], stdin: &str) -> ExecRun {
    run_exec(exec_command(home, provider, args), stdin).await
}

/// The events schema with every `$ref` replaced by its definition (the schema is not
/// recursive), so the shared validator can check it.
fn inlined_schema() -> Value {
    let document: Value = serde_json::from_str(EVENTS_SCHEMA).expect("events schema");
    fn inline(value: &Value, definitions: &Value) -> Value {
        match value {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    let name = reference
                        .strip_prefix("#/definitions/")
                        .unwrap_or_else(|| panic!("unsupported $ref {reference}"));
                    let target = &definitions[name];
                    assert!(!target.is_null(), "unresolved $ref {reference}");
                    return inline(target, definitions);
                }
                Value::Object(
                    map.iter()
                        .filter(|(key, _)| key.as_str() != "definitions")
                        .map(|(key, value)| (key.clone(), inline(value, definitions)))
                        .collect(),
                )
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| inline(v, definitions)).collect())
            }
            other => other.clone(),
        }
    }
    inline(&document, &document["definitions"])
}

/// What is wrong with an event, by the documented schema.
pub fn schema_problem(event: &Value) -> Result<(), String> {
    schema::validate_inlined(&inlined_schema(), event)
}

/// One event must match the documented schema.
pub fn check_event(event: &Value) {
    if let Err(problem) = schema_problem(event) {
        panic!("exec event does not match docs/exec-events.schema.json: {problem}\n{event}");
    }
}

/// The order every run keeps: `thread.started` first; at most one `turn.started`, before any
/// item; a turn's end (`turn.completed` / `turn.failed`) last, at most once; every
/// `item.updated` / `item.completed` of an item that had an `item.started` comes after it.
pub fn check_order(events: &[Value]) {
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(types.first(), Some(&"thread.started"), "{events:#?}");
    assert_eq!(
        types.iter().filter(|t| **t == "thread.started").count(),
        1,
        "{events:#?}"
    );
    let ends = types
        .iter()
        .filter(|t| matches!(**t, "turn.completed" | "turn.failed"))
        .count();
    assert!(ends <= 1, "more than one turn end: {events:#?}");
    if ends == 1 {
        assert!(
            matches!(types.last(), Some(&"turn.completed" | &"turn.failed")),
            "the turn's end is not last: {events:#?}"
        );
    }
    let mut completed = std::collections::HashSet::new();
    for event in events {
        let id = event["item"]["id"].as_str().unwrap_or_default().to_string();
        match event["type"].as_str() {
            Some("item.started") => {
                assert!(!completed.contains(&id), "{id} started after it completed")
            }
            Some("item.updated") => {
                assert!(!completed.contains(&id), "{id} updated after it completed")
            }
            Some("item.completed") => assert!(completed.insert(id.clone()), "{id} completed twice"),
            _ => {}
        }
    }
}

/// The events of a given type.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}
