//! `config/read` never shows a provider's header values: everything under `http_headers` and
//! `env_http_headers` is redacted whatever the header is called, as is any key named like a
//! key, token, secret or authorization — in the merged config and in every layer.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use serde_json::json;
use support::*;

const CONFIG_TOML: &str = "[model_providers.other]\nbase_url = \"http://127.0.0.1:9\"\n\
api_key_header = \"sk-hide-header-name\"\n\
[model_providers.other.http_headers]\nAuthorization = \"Bearer sk-hide-auth\"\n\
x-api-key = \"sk-hide-xkey\"\nX-Custom = \"sk-hide-custom\"\n\
[model_providers.other.env_http_headers]\nX-Env = \"SK_HIDE_ENV_VAR\"\n";

#[tokio::test]
async fn config_read_redacts_every_provider_header_value_in_config_and_layers() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), CONFIG_TOML).unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let read = daemon
        .ok("config/read", json!({"includeLayers": true}))
        .await;
    let text = read.to_string();
    assert!(!text.to_ascii_lowercase().contains("sk-hide"), "{read}");
    assert!(!text.contains("SK_HIDE"), "{read}");
    let other = &read["config"]["model_providers"]["other"];
    // The header names stay visible; only their values are hidden.
    assert_eq!(other["http_headers"]["Authorization"], "<redacted>");
    assert_eq!(other["http_headers"]["x-api-key"], "<redacted>");
    assert_eq!(other["http_headers"]["X-Custom"], "<redacted>");
    assert_eq!(other["env_http_headers"]["X-Env"], "<redacted>");
    assert_eq!(other["api_key_header"], "<redacted>");
    assert_eq!(other["base_url"], "http://127.0.0.1:9");
}
