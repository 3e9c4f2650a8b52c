//! `model/list`, the model picker, through the real binary: the OpenAI provider offers the
//! catalogue openturn ships (efforts and default effort per model, older models hidden), any
//! other provider the models its own `GET {base_url}/models` lists (asked with the provider's
//! key, once per few minutes); a provider that fails or never answers leaves the configured
//! model, which is always listed and the default. Each known model gets `apply_patch` in the
//! form its catalogue entry names.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use openturn::mock_provider::{error_status, model_list};
use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn ids(listing: &Value) -> Vec<String> {
    listing["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|model| model["id"].as_str().map(str::to_string))
        .collect()
}

fn entry<'a>(listing: &'a Value, id: &str) -> &'a Value {
    listing["data"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|model| model["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {listing}"))
}

fn efforts(model: &Value) -> Vec<String> {
    model["supportedReasoningEfforts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|effort| effort["reasoningEffort"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn the_openai_provider_offers_the_shipped_catalogue() {
    let mock = provider(Vec::new()).await;
    mock.serve_model_list(model_list(&["not-from-the-catalogue"]));
    let home = tempfile::tempdir().unwrap();
    let overrides = [
        "model=\"gpt-5\"".to_string(),
        "model_provider=\"openai\"".to_string(),
        format!("openai_base_url=\"{}\"", mock.base_url()),
    ];
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let listing = daemon.ok("model/list", json!({})).await;
    let listed = ids(&listing);
    assert_eq!(
        listed[0], "gpt-5",
        "the configured model comes first: {listed:?}"
    );
    assert!(
        listed.len() > 5
            && ["gpt-6.2-sol", "gpt-6-luna", "gpt-5.5"]
                .iter()
                .all(|id| listed.iter().any(|listed| listed == id)),
        "{listed:?}"
    );
    assert!(
        !listed.iter().any(|id| id == "gpt-4o"),
        "hidden: {listed:?}"
    );
    assert!(!listed.iter().any(|id| id == "not-from-the-catalogue"));
    let defaults: Vec<&str> = listing["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|model| model["isDefault"] == true)
        .filter_map(|model| model["id"].as_str())
        .collect();
    assert_eq!(defaults, vec!["gpt-5"]);
    let sol = entry(&listing, "gpt-6.2-sol");
    assert_eq!(
        efforts(sol),
        vec!["low", "medium", "high", "xhigh", "max", "ultra"]
    );
    assert_eq!(sol["defaultReasoningEffort"], "low");
    assert_eq!(sol["displayName"], "GPT-6.2 Sol");
    assert!(sol["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert_eq!(
        efforts(entry(&listing, "gpt-6-luna"))
            .last()
            .map(String::as_str),
        Some("max")
    );
    assert_eq!(
        efforts(entry(&listing, "gpt-5")),
        vec!["minimal", "low", "medium", "high"]
    );

    let everything = daemon
        .ok("model/list", json!({"includeHidden": true}))
        .await;
    let plain = entry(&everything, "gpt-4o");
    assert_eq!(plain["hidden"], true);
    assert_eq!(plain["supportedReasoningEfforts"], json!([]));
    assert_eq!(plain["defaultReasoningEffort"], "none");
    // The catalogue is shipped: OpenAI is not asked.
    assert_eq!(mock.model_list_requests().len(), 0);
}

#[tokio::test]
async fn another_provider_offers_what_it_lists_asked_once_with_its_key() {
    let mock = provider(Vec::new()).await;
    mock.serve_model_list(model_list(&["local-a", "gpt-5", "local-b"]));
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&mock));
    daemon.initialize().await;
    let listing = daemon.ok("model/list", json!({})).await;
    assert_eq!(ids(&listing), vec!["gpt-5", "local-a", "local-b"]);
    assert_eq!(entry(&listing, "gpt-5")["isDefault"], true);
    assert_eq!(entry(&listing, "local-a")["isDefault"], false);
    assert_eq!(entry(&listing, "local-a")["displayName"], "local-a");
    let again = daemon.ok("model/list", json!({})).await;
    assert_eq!(ids(&again), ids(&listing));
    let asked = mock.model_list_requests();
    assert_eq!(asked.len(), 1, "the list is kept, not asked for again");
    let authorization = asked[0]
        .headers
        .iter()
        .find(|(name, _)| name == "authorization")
        .map(|(_, value)| value.as_str());
    assert_eq!(authorization, Some("Bearer sk-test-secret-key"));
    // The Responses requests are untouched by the listing.
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn a_provider_that_fails_to_list_leaves_the_configured_model_and_is_asked_again() {
    let mock = provider(Vec::new()).await;
    mock.serve_model_list(error_status(500, "server_error", "listing is down"));
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&mock);
    overrides.push("models.house-model.display_name=\"House model\"".to_string());
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let listing = daemon.ok("model/list", json!({})).await;
    assert_eq!(ids(&listing), vec!["gpt-5", "house-model"]);
    // A failure is not kept: once the provider answers, its models appear.
    mock.serve_model_list(model_list(&["local-a"]));
    let listing = daemon.ok("model/list", json!({})).await;
    assert_eq!(ids(&listing), vec!["gpt-5", "house-model", "local-a"]);
    assert_eq!(mock.model_list_requests().len(), 2);
}

#[tokio::test]
async fn a_provider_that_never_answers_does_not_hold_the_picker() {
    // Accepts connections and never answers them.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            connections.push(stream);
        }
    });
    let home = tempfile::tempdir().unwrap();
    let overrides = [
        "model=\"local-model\"".to_string(),
        "model_provider=\"silent\"".to_string(),
        format!("model_providers.silent.base_url=\"http://127.0.0.1:{port}/v1\""),
    ];
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    // The daemon gives up on the list well within the test's own timeout.
    let listing = daemon.ok("model/list", json!({})).await;
    assert_eq!(ids(&listing), vec!["local-model"]);
    assert_eq!(entry(&listing, "local-model")["isDefault"], true);
    held.abort();
}

#[tokio::test]
async fn each_known_model_gets_apply_patch_in_the_form_its_entry_names() {
    let mut s = session(
        Script::new([text_reply(0, "a"), text_reply(1, "b"), text_reply(2, "c")]),
        &[],
        json!({}),
    )
    .await;
    for (n, model) in ["gpt-6.2-sol", "o3", "gpt-4.1"].iter().enumerate() {
        s.start_turn(&format!("turn {n}"), json!({"model": model}))
            .await;
        s.daemon.until_turn_completed().await;
    }
    let bodies = s.bodies(3).await;
    let patch_tool_type = |body: &Value| -> Value {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|tool| tool["name"] == "apply_patch")
            .map(|tool| tool["type"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(bodies[0]["model"], "gpt-6.2-sol");
    assert_eq!(patch_tool_type(&bodies[0]), "custom");
    assert_eq!(patch_tool_type(&bodies[1]), "function");
    assert_eq!(patch_tool_type(&bodies[2]), "function");
}
