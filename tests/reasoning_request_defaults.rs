//! What a request says about reasoning follows the model catalogue: a reasoning model with
//! nothing configured gets `reasoning: {"summary": "auto"}` and asks for encrypted reasoning (as
//! the reference sends); a model that does not reason gets neither field, and `model/list` shows
//! it without reasoning efforts. The catalogue is consulted per request, so a `turn/start` model
//! switch changes the next request. `[models.<id>]` entries override the built-in families.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The reasoning-related fields of a request body (`None` when absent).
fn reasoning_fields(body: &Value) -> (Option<Value>, Option<Value>) {
    (body.get("reasoning").cloned(), body.get("include").cloned())
}

fn encrypted_reasoning() -> Option<Value> {
    Some(json!(["reasoning.encrypted_content"]))
}

#[tokio::test]
async fn a_reasoning_model_gets_the_summary_default_and_a_plain_model_gets_no_reasoning() {
    let mut s = session(
        Script::new([text_reply(0, "a"), text_reply(1, "b")]),
        &[],
        json!({}),
    )
    .await;
    s.run_turn("one").await;
    // Switching to a model that does not reason drops the fields from the next request.
    s.start_turn("two", json!({"model": "gpt-4o"})).await;
    s.daemon.until_turn_completed().await;
    let bodies = s.bodies(2).await;
    assert_eq!(
        reasoning_fields(&bodies[0]),
        (Some(json!({"summary": "auto"})), encrypted_reasoning())
    );
    assert_eq!(bodies[1]["model"], "gpt-4o");
    assert_eq!(reasoning_fields(&bodies[1]), (None, None));
}

#[tokio::test]
async fn configured_models_override_the_families_in_requests_and_in_model_list() {
    let overrides = [
        "model=\"local-llm\"",
        "models.local-llm.supports_reasoning=false",
        "models.gpt-5.default_reasoning_summary=\"none\"",
        "models.gpt-4o-mini.default_reasoning_summary=\"detailed\"",
    ];
    let mut s = session(
        Script::new([text_reply(0, "a"), text_reply(1, "b"), text_reply(2, "c")]),
        &overrides,
        json!({}),
    )
    .await;
    s.run_turn("one").await;
    s.start_turn("two", json!({"model": "gpt-5"})).await;
    s.daemon.until_turn_completed().await;
    s.start_turn("three", json!({"model": "gpt-4o-mini", "effort": "low"}))
        .await;
    s.daemon.until_turn_completed().await;
    let bodies = s.bodies(3).await;
    assert_eq!(reasoning_fields(&bodies[0]), (None, None));
    assert_eq!(
        reasoning_fields(&bodies[1]),
        (Some(json!({})), encrypted_reasoning())
    );
    assert_eq!(
        reasoning_fields(&bodies[2]),
        (
            Some(json!({"effort": "low", "summary": "detailed"})),
            encrypted_reasoning()
        )
    );

    let models = s
        .daemon
        .ok("model/list", json!({"includeHidden": true}))
        .await;
    let by_id = |id: &str| -> Value {
        models["data"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|model| model["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not listed: {models}"))
    };
    let local = by_id("local-llm");
    assert_eq!(local["isDefault"], true);
    assert_eq!(local["supportedReasoningEfforts"], json!([]));
    assert_eq!(local["defaultReasoningEffort"], "none");
    let efforts: Vec<Value> = by_id("gpt-5")["supportedReasoningEfforts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|effort| effort["reasoningEffort"].clone())
        .collect();
    // gpt-5 is in the shipped catalogue: its own efforts, `minimal` included.
    assert_eq!(
        efforts,
        vec![
            json!("minimal"),
            json!("low"),
            json!("medium"),
            json!("high")
        ]
    );
}
