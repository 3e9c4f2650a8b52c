//! Accounts and providers through the real binary: `account/rateLimits/read` gives the last
//! snapshot a provider reported in its rate-limit headers, and the reference's error before any.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::{json, Value};
use support::*;

/// A text reply whose response headers report rate limits.
fn limited_reply(n: usize, primary_used: &str, secondary_used: &str) -> Reply {
    let mut reply =
        mock_provider::simple_text_response(&format!("resp_{n}"), &format!("msg_{n}"), "ok", 2);
    reply.headers = [
        ("x-codex-primary-used-percent", primary_used),
        ("x-codex-primary-window-minutes", "300"),
        ("x-codex-primary-reset-at", "1796150000"),
        ("x-codex-secondary-used-percent", secondary_used),
        ("x-codex-secondary-window-minutes", "10080"),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value.to_string()))
    .collect();
    Reply::Sse(reply)
}

#[tokio::test]
async fn rate_limits_read_gives_the_latest_reported_snapshot() {
    let provider = provider(vec![
        limited_reply(0, "12.4", "3"),
        limited_reply(1, "42.6", "7"),
        text_reply(2, "no headers this time"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let none = daemon.err("account/rateLimits/read", Value::Null).await;
    assert_eq!(none["code"], -32600);
    assert_eq!(
        none["message"],
        "codex account authentication required to read rate limits"
    );

    let thread = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &thread, "one").await;
    text_turn(&mut daemon, &thread, "two").await;
    let read = daemon.ok("account/rateLimits/read", json!({})).await;
    let expected = json!({
        "limitId": "codex", "limitName": null,
        "primary": {"usedPercent": 43, "windowDurationMins": 300, "resetsAt": 1796150000},
        "secondary": {"usedPercent": 7, "windowDurationMins": 10080, "resetsAt": null},
        "credits": null, "planType": null, "normalModelSlug": null, "individualLimit": null,
        "spendControlReached": null, "rateLimitReachedType": null,
    });
    assert_eq!(read["rateLimits"], expected);
    assert_eq!(read["rateLimitsByLimitId"], json!({"codex": expected}));

    // A response without the headers leaves the last snapshot standing.
    text_turn(&mut daemon, &thread, "three").await;
    let again = daemon.ok("account/rateLimits/read", json!({})).await;
    assert_eq!(again["rateLimits"], expected);
    let bad = daemon
        .err(
            "account/rateLimits/read",
            json!({"excludeResetCreditDetails": "yes"}),
        )
        .await;
    assert_eq!(bad["code"], -32602);
}

#[tokio::test]
async fn providers_are_listed_without_their_secrets() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[model_providers.keyed]\nname = \"Keyed\"\nbase_url = \"https://example.com/v1\"\nenv_key = \"KEYED_API_KEY\"\n\n[model_providers.secretive]\nname = \"Secretive\"\nbase_url = \"https://user:hunter2@example.com/v1\"\n",
    )
    .unwrap();
    let provider = provider(Vec::new()).await;
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let listed = daemon.ok("modelProvider/list", json!({})).await;
    assert_eq!(
        listed,
        json!({
            "data": [
                {"id": "keyed", "name": "Keyed", "canEdit": true, "baseUrl": "https://example.com/v1",
                 "settings": {"type": "customGateway",
                              "auth": {"mode": "environmentVariable", "envKey": "KEYED_API_KEY"}}},
                {"id": "mock", "name": "mock", "canEdit": true, "baseUrl": provider.base_url(),
                 "settings": {"type": "customGateway",
                              "auth": {"mode": "environmentVariable", "envKey": "OPENTURN_TEST_KEY"}}},
                {"id": "openai", "name": "OpenAI", "canEdit": false, "baseUrl": null,
                 "settings": {"type": "openai"}},
                {"id": "secretive", "name": "Secretive", "canEdit": true, "baseUrl": null,
                 "settings": {"type": "customGateway", "auth": {"mode": "none"}}},
            ],
            "defaultProviderId": "mock",
            "canChangeDefault": true,
        })
    );
    assert!(!listed.to_string().contains("hunter2"));
    let capabilities = daemon
        .ok("modelProvider/capabilities/read", Value::Null)
        .await;
    // The default model (gpt-5) is offered the hosted search; openturn has no image tool.
    assert_eq!(
        capabilities,
        json!({"imageGeneration": false, "webSearch": true})
    );
}

/// `webSearch` says whether a thread of the configured model gets the hosted search: not when
/// the configuration turns it off, nor for a model of another provider (no hosted tools).
#[tokio::test]
async fn the_web_search_capability_follows_the_configured_models_tool_set() {
    let provider = provider(Vec::new()).await;
    for (extra, expected) in [
        (&[][..], true),
        (&["web_search=\"disabled\""][..], false),
        (&["tools.web_search.enabled=false"][..], false),
        (&["model=\"llama3\""][..], false),
        (&["model=\"llama3\"", "tools.web_search=true"][..], true),
    ] {
        let home = tempfile::tempdir().unwrap();
        let mut overrides = mock_overrides(&provider);
        overrides.extend(extra.iter().map(|o| o.to_string()));
        let mut daemon = Daemon::spawn(home.path(), &overrides);
        daemon.initialize().await;
        let capabilities = daemon
            .ok("modelProvider/capabilities/read", Value::Null)
            .await;
        assert_eq!(capabilities["webSearch"], expected, "{extra:?}");
        assert_eq!(capabilities["imageGeneration"], false);
    }
}
