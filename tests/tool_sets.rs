//! The tools each model is offered, through the real binary: the names and parameter schemas
//! of every request's `tools` match what the reference CLI sends the same model. The expected
//! arrays are `tests/fixtures/tool_sets/<model>.json`, captured from the reference's request
//! bodies against a loopback provider (descriptions and the patch grammar's text left out: the
//! wording is each project's own; names, types, required fields and enums are the contract).
//!
//! Tools another part of openturn brings are listed in [`NOT_YET_PROVIDED`] and
//! [`SHAPE_DIFFERS`]; when one lands, its name leaves the list and the fixture checks it too.
//! The configuration keys that change a set are tested below the fixtures.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// Names in the reference's sets that no tool of this build provides yet: left out of the
/// expected names (`write_stdin`: terminals; the goal tools: goals; `tool_search`: deferred MCP
/// tools; `multi_agent_v1`: sub-agents). Empty now that every one of them has landed.
const NOT_YET_PROVIDED: &[&str] = &[];

/// Offered tools whose parameters do not match the reference's yet (`exec_command` takes the
/// reference's PTY parameters with the terminals work).
const SHAPE_DIFFERS: &[&str] = &["exec_command"];

/// A tool's name as a set lists it: a hosted tool has only a type.
fn name_of(tool: &Value) -> String {
    tool["name"]
        .as_str()
        .or(tool["type"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// `value` without its prose: every `description` and the patch grammar's `definition`.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, inner)| {
                    !(matches!(key.as_str(), "description" | "definition") && inner.is_string())
                })
                .map(|(key, inner)| (key.clone(), shape(inner)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        other => other.clone(),
    }
}

fn fixture(model: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tool_sets")
        .join(format!("{model}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn params(model: &str, sandbox: &str) -> Value {
    let dir = std::env::temp_dir();
    json!({"approvalPolicy": "never", "sandbox": sandbox, "model": model,
        "cwd": dir.display().to_string()})
}

/// The `tools` of the first request of a turn run with `model` (and `extra` config).
async fn offered(model: &str, sandbox: &str, extra: &[&str]) -> Vec<Value> {
    let script = Script::new([message_reply("r1", "m1", &["ok"])]);
    let mut s = session(script, extra, params(model, sandbox)).await;
    s.run_turn("hi").await;
    let bodies = s.bodies(1).await;
    bodies[0]["tools"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn each_known_model_is_offered_the_reference_tools_with_its_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tool_sets");
    let mut models: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    models.sort();
    assert!(models.len() >= 4, "{models:?}");
    let script = Script::new((0..models.len()).map(|n| text_reply(n, "ok")));
    let mut s = session(script, &[], params("gpt-5", "workspace-write")).await;
    for (n, model) in models.iter().enumerate() {
        s.start_turn(&format!("turn {n}"), json!({"model": model}))
            .await;
        s.daemon.until_turn_completed().await;
    }
    let bodies = s.bodies(models.len()).await;
    for (model, body) in models.iter().zip(&bodies) {
        assert_eq!(body["model"], model.as_str());
        let expected: Vec<Value> = fixture(model)
            .into_iter()
            .filter(|tool| !NOT_YET_PROVIDED.contains(&name_of(tool).as_str()))
            .collect();
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        let names: Vec<String> = tools.iter().map(name_of).collect();
        let expected_names: Vec<String> = expected.iter().map(name_of).collect();
        assert_eq!(names, expected_names, "tool names offered to {model}");
        for (tool, reference) in tools.iter().zip(&expected) {
            if SHAPE_DIFFERS.contains(&name_of(tool).as_str()) {
                continue;
            }
            assert_eq!(
                shape(tool),
                *reference,
                "{model}: {} differs from the reference",
                name_of(tool)
            );
        }
    }
}

#[tokio::test]
async fn other_models_get_function_tools_without_hosted_or_namespaced_ones() {
    let names: Vec<String> = offered("local-llm", "workspace-write", &[])
        .await
        .iter()
        .map(name_of)
        .collect();
    assert_eq!(
        names,
        [
            "exec_command",
            "write_stdin",
            "update_plan",
            "request_user_input",
            "apply_patch",
            "view_image",
            "get_goal",
            "create_goal",
            "update_goal"
        ]
    );
}

#[tokio::test]
async fn web_search_is_live_without_a_sandbox_and_its_config_key_changes_or_removes_it() {
    let search = |tools: &[Value]| tools.iter().find(|t| t["type"] == "web_search").cloned();
    let full = offered("gpt-5", "danger-full-access", &[]).await;
    assert_eq!(
        search(&full),
        Some(json!({"type": "web_search", "external_web_access": true}))
    );
    let live = offered("gpt-5.5", "read-only", &["web_search=\"live\""]).await;
    assert_eq!(
        search(&live),
        Some(json!({"type": "web_search", "external_web_access": true,
            "search_content_types": ["text", "image"]}))
    );
    let off = offered("gpt-5", "danger-full-access", &["web_search=\"disabled\""]).await;
    assert_eq!(search(&off), None, "{off:#?}");
    // As in the reference: a configured cache still goes live without a sandbox, and `indexed`
    // adds the provider's index.
    let cached = offered("gpt-5", "danger-full-access", &["web_search=\"cached\""]).await;
    assert_eq!(
        search(&cached),
        Some(json!({"type": "web_search", "external_web_access": true}))
    );
    let indexed = offered("gpt-5", "read-only", &["web_search=\"indexed\""]).await;
    assert_eq!(
        search(&indexed),
        Some(json!({"type": "web_search", "external_web_access": true,
            "indexed_web_access": true}))
    );
}

#[tokio::test]
async fn tools_switches_and_a_models_list_override_the_family_set() {
    let names = |tools: Vec<Value>| tools.iter().map(name_of).collect::<Vec<_>>();
    let switched = offered(
        "gpt-5",
        "workspace-write",
        &["tools.view_image=false", "tools.update_plan.enabled=true"],
    )
    .await;
    assert_eq!(
        names(switched),
        [
            "exec_command",
            "write_stdin",
            "update_plan",
            "request_user_input",
            "multi_agent_v1",
            "get_goal",
            "create_goal",
            "update_goal",
            "web_search"
        ]
    );
    let listed = offered(
        "local-coder",
        "workspace-write",
        &["models.local-coder.tools=[\"exec_command\", \"view_image\"]"],
    )
    .await;
    assert_eq!(names(listed), ["exec_command", "view_image"]);
}
