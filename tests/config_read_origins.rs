//! `config/read` says where each key came from: keys of config.toml name the user layer with
//! the file's path and a `sha256:` version of its bytes, `-c` overrides name the session-flags
//! layer (and win over the file), `includeLayers` lists the user layer then the flags layer, and
//! secrets stay redacted in every part of the answer.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::json;
use support::*;

const CONFIG_TOML: &str = "model_reasoning_summary = \"concise\"\nmodel = \"from-file\"\n\n\
[model_providers.other]\nbase_url = \"http://127.0.0.1:9\"\nexperimental_bearer_token = \"sk-hide\"\n";

/// sha256 of [`CONFIG_TOML`], computed independently (`sha256sum`).
const CONFIG_TOML_SHA256: &str = "3cb2504c96b151fe6a9abb3467fc91b97df25b4aa6630709edd143b9e7c0ca4d";

#[tokio::test]
async fn config_keys_name_their_layer_and_file_version_and_layers_come_user_then_flags() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("config.toml");
    std::fs::write(&file, CONFIG_TOML).unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let user = json!({
        "name": {"type": "user", "file": file.display().to_string(), "profile": null},
        "version": format!("sha256:{CONFIG_TOML_SHA256}"),
    });
    let read = daemon.ok("config/read", json!({})).await;
    let origins = &read["origins"];
    assert_eq!(origins["model_reasoning_summary"], user);
    assert_eq!(origins["model_providers.other.base_url"], user);
    assert_eq!(
        origins["model_providers.other.experimental_bearer_token"],
        user
    );
    // `model` is in both; the flag wins, in the value and in its origin.
    assert_eq!(read["config"]["model"], "gpt-5");
    assert_eq!(origins["model"]["name"], json!({"type": "sessionFlags"}));
    assert_eq!(
        origins["model_providers.mock.base_url"]["name"]["type"],
        "sessionFlags"
    );
    let flags_version = origins["model"]["version"].as_str().unwrap_or_default();
    assert!(flags_version.starts_with("sha256:"), "{flags_version}");
    assert_eq!(flags_version.len(), "sha256:".len() + 64);
    assert!(read.get("layers").is_none(), "layers only when asked");

    let with_layers = daemon
        .ok("config/read", json!({"includeLayers": true}))
        .await;
    let layers = with_layers["layers"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("no layers: {with_layers}"));
    assert_eq!(layers.len(), 2);
    assert_eq!(layers[0]["name"], user["name"]);
    assert_eq!(layers[0]["version"], user["version"]);
    assert_eq!(layers[0]["config"]["model"], "from-file");
    assert_eq!(layers[1]["name"], json!({"type": "sessionFlags"}));
    assert_eq!(layers[1]["config"]["model"], "gpt-5");
    assert_eq!(
        layers[1]["config"]["model_providers"]["mock"]["name"],
        "mock"
    );
    assert!(
        !with_layers.to_string().contains("sk-hide"),
        "{with_layers}"
    );
    assert_eq!(
        layers[0]["config"]["model_providers"]["other"]["experimental_bearer_token"],
        "<redacted>"
    );
}

#[tokio::test]
async fn without_a_config_file_only_flags_have_origins() {
    let home = tempfile::tempdir().unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    let read = daemon
        .ok("config/read", json!({"includeLayers": true}))
        .await;
    let origins = read["origins"].as_object().cloned().unwrap_or_default();
    assert!(!origins.is_empty());
    assert!(
        origins
            .values()
            .all(|o| o["name"] == json!({"type": "sessionFlags"})),
        "{origins:#?}"
    );
    assert_eq!(read["layers"].as_array().map(Vec::len), Some(1));
}
