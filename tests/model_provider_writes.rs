//! `modelProvider/default/set` and `modelProvider/config/write` through the real binary: the
//! user's config.toml gets exactly the edit asked for (comments, order and every other key stay
//! byte for byte), a new thread starts on the new default and its turn reaches that provider,
//! a gateway is edited or created as `modelProvider/list` then shows it, and bad input is
//! refused with -32602 naming the field, the file untouched.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;

/// A config with two gateways, each a mock provider, `first` the default.
fn config_text(first: &MockProvider, second: &MockProvider) -> String {
    format!(
        "# my settings\n\
         model = \"gpt-5\"   # the usual\n\
         model_provider = \"first\"\n\
         \n\
         [model_providers.first]\n\
         # where it all started\n\
         name = \"First\"\n\
         base_url = \"{}\"\n\
         env_key = \"OPENTURN_TEST_KEY\"\n\
         request_max_retries = 0\n\
         \n\
         [model_providers.second]\n\
         name = \"Second\"\n\
         base_url = \"{}\"\n\
         env_key = \"OPENTURN_TEST_KEY\"\n\
         request_max_retries = 0\n",
        first.base_url(),
        second.base_url()
    )
}

fn read(home: &Path) -> String {
    std::fs::read_to_string(home.join("config.toml")).unwrap()
}

async fn daemon_in(home: &Path, text: &str) -> Daemon {
    std::fs::write(home.join("config.toml"), text).unwrap();
    let mut daemon = Daemon::spawn(home, &[]);
    daemon.initialize().await;
    daemon
}

#[tokio::test]
async fn a_new_default_is_written_alone_and_the_next_thread_uses_it() {
    let home = tempfile::tempdir().unwrap();
    let first = provider(Vec::new()).await;
    let second = provider(vec![text_reply(1, "from the second")]).await;
    let original = config_text(&first, &second);
    let mut daemon = daemon_in(home.path(), &original).await;

    let written = daemon
        .ok("modelProvider/default/set", json!({"providerId": "second"}))
        .await;
    let expected = original.replace("model_provider = \"first\"", "model_provider = \"second\"");
    assert_eq!(read(home.path()), expected);
    assert_eq!(written["status"], "ok");
    assert_eq!(written["overriddenMetadata"], Value::Null);
    let listed = daemon.ok("modelProvider/list", json!({})).await;
    assert_eq!(listed["defaultProviderId"], "second");

    let started = daemon.ok("thread/start", json!({"cwd": home.path()})).await;
    assert_eq!(started["modelProvider"], "second", "{started}");
    let thread_id = started["thread"]["id"].as_str().unwrap().to_string();
    text_turn(&mut daemon, &thread_id, "hello").await;
    assert_eq!(second.requests().len(), 1);
    assert_eq!(first.requests().len(), 0);

    // An id nothing defines, or none at all, is refused and the file stays as it was.
    let unknown = daemon
        .err("modelProvider/default/set", json!({"providerId": "nope"}))
        .await;
    assert_eq!(unknown["code"], -32602, "{unknown}");
    let message = unknown["message"].as_str().unwrap();
    assert!(
        message.contains("providerId") && message.contains("nope"),
        "{message}"
    );
    let missing = daemon.err("modelProvider/default/set", json!({})).await;
    assert_eq!(missing["code"], -32602, "{missing}");
    assert!(missing["message"].as_str().unwrap().contains("providerId"));
    assert_eq!(read(home.path()), expected);
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn a_gateway_is_edited_and_created_and_only_its_table_changes() {
    let home = tempfile::tempdir().unwrap();
    let first = provider(Vec::new()).await;
    let second = provider(Vec::new()).await;
    let original = config_text(&first, &second);
    let mut daemon = daemon_in(home.path(), &original).await;

    let edited = daemon
        .ok(
            "modelProvider/config/write",
            json!({"settings": {"type": "customGateway", "providerId": "second",
                                "name": "  Renamed ", "envKey": null}}),
        )
        .await;
    assert_eq!(
        edited,
        json!({"provider": {"id": "second", "name": "Renamed", "canEdit": true,
                            "baseUrl": second.base_url(),
                            "settings": {"type": "customGateway", "auth": {"mode": "none"}}}})
    );
    let after_edit = original
        .replace("name = \"Second\"", "name = \"Renamed\"")
        .replacen(
            &format!(
                "base_url = \"{}\"\nenv_key = \"OPENTURN_TEST_KEY\"\n",
                second.base_url()
            ),
            &format!("base_url = \"{}\"\n", second.base_url()),
            1,
        );
    assert_eq!(read(home.path()), after_edit);

    // A name already taken as an id gets the next free one.
    let created = daemon
        .ok(
            "modelProvider/config/write",
            json!({"settings": {"type": "customGateway", "name": "First",
                                "baseUrl": " http://127.0.0.1:9/v1 ", "envKey": "MY_KEY"}}),
        )
        .await;
    assert_eq!(
        created,
        json!({"provider": {"id": "first-2", "name": "First", "canEdit": true,
                            "baseUrl": "http://127.0.0.1:9/v1",
                            "settings": {"type": "customGateway",
                                         "auth": {"mode": "environmentVariable", "envKey": "MY_KEY"}}}})
    );
    let after_create = format!(
        "{after_edit}\n[model_providers.first-2]\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         env_key = \"MY_KEY\"\nname = \"First\"\nwire_api = \"responses\"\n"
    );
    assert_eq!(read(home.path()), after_create);
    let listed = daemon.ok("modelProvider/list", json!({})).await;
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|provider| provider["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["first", "first-2", "openai", "second"]);
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn bad_provider_settings_are_refused_naming_the_field() {
    let home = tempfile::tempdir().unwrap();
    let first = provider(Vec::new()).await;
    let second = provider(Vec::new()).await;
    let original = config_text(&first, &second);
    let mut daemon = daemon_in(home.path(), &original).await;

    let gateway = |fields: Value| {
        let mut settings = json!({"type": "customGateway"});
        settings
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        json!({"settings": settings})
    };
    let cases = [
        (
            json!({"providerId": "first", "baseUrl": "ftp://x"}),
            "settings.baseUrl",
        ),
        (
            json!({"providerId": "first", "baseUrl": "https://u:p@x/v1"}),
            "settings.baseUrl",
        ),
        (
            json!({"providerId": "first", "baseUrl": "https://x/v1?key=k"}),
            "settings.baseUrl",
        ),
        (
            json!({"providerId": "first", "baseUrl": null}),
            "settings.baseUrl",
        ),
        (
            json!({"providerId": "first", "name": "  "}),
            "settings.name",
        ),
        (
            json!({"providerId": "first", "envKey": "1-BAD"}),
            "settings.envKey",
        ),
        (
            json!({"providerId": "nope", "name": "x"}),
            "settings.providerId",
        ),
        (
            json!({"providerId": "openai", "name": "x"}),
            "settings.providerId",
        ),
        (json!({"baseUrl": "https://x/v1"}), "settings.name"),
        (
            json!({"name": "OpenAI", "baseUrl": "https://x/v1"}),
            "settings.name",
        ),
        (json!({"name": "New"}), "settings.baseUrl"),
        (json!({"providerId": "first", "extra": 1}), "extra"),
    ];
    for (fields, field) in cases {
        let refused = daemon
            .err("modelProvider/config/write", gateway(fields.clone()))
            .await;
        assert_eq!(refused["code"], -32602, "{fields}: {refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(message.contains(field), "{fields}: {message}");
    }
    let unknown_id = daemon
        .err(
            "modelProvider/config/write",
            gateway(json!({"providerId": "nope", "name": "x"})),
        )
        .await;
    assert_eq!(
        unknown_id["data"]["config_write_error_code"],
        "configPathNotFound"
    );
    let bedrock = daemon
        .err(
            "modelProvider/config/write",
            json!({"settings": {"type": "bedrock", "providerId": "amazon-bedrock"}}),
        )
        .await;
    assert_eq!(bedrock["code"], -32602, "{bedrock}");
    assert!(bedrock["message"]
        .as_str()
        .unwrap()
        .contains("settings.type"));
    assert_eq!(read(home.path()), original);
    daemon.exit_cleanly().await;
}
