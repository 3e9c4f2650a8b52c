//! `config/value/write`, `config/batchWrite` and `skills/config/write` edit the user's
//! config.toml through the real binary: only the edited key changes (comments, blank lines, key
//! order and unrelated keys survive byte for byte), `expectedVersion` from `config/read`
//! guards against a file changed meanwhile, and a refused write (an unknown key, a value of the
//! wrong kind, a stale version, another file, one bad edit of a batch) leaves the file exactly
//! as it was, with no temporary file behind. A `-c` flag on a written key is reported as
//! overriding it, its value redacted when secret.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;

const ORIGINAL: &str = "# my settings\n\
model_reasoning_effort = \"low\"   # fast for now\n\
\n\
# which tools\n\
[features]\n\
apply_patch_streaming_events = false\n\
\n\
[mcp_servers.docs]\n\
# the docs server\n\
command = \"docs-server\"\n\
args = [\"--port\", \"0\"]\n";

async fn daemon_with(home: &Path, text: &str, extra_flags: &[&str]) -> (Daemon, MockProvider) {
    std::fs::write(home.join("config.toml"), text).unwrap();
    let provider = MockProvider::start(Script::new(vec![])).await.unwrap();
    let mut flags = mock_overrides(&provider);
    flags.extend(extra_flags.iter().map(|flag| flag.to_string()));
    let mut daemon = Daemon::spawn(home, &flags);
    daemon.initialize().await;
    (daemon, provider)
}

/// The version `config/read` reports for the user file.
async fn user_version(daemon: &mut Daemon) -> String {
    let read = daemon.ok("config/read", json!({})).await;
    read["origins"]["model_reasoning_effort"]["version"]
        .as_str()
        .unwrap_or_else(|| panic!("no user version: {read}"))
        .to_string()
}

fn read(home: &Path) -> String {
    std::fs::read_to_string(home.join("config.toml")).unwrap()
}

/// Nothing but config.toml in the home: no temporary file survived a write.
fn only_config_file(home: &Path) {
    let names: Vec<String> = std::fs::read_dir(home)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "sessions")
        .collect();
    assert_eq!(names, vec!["config.toml".to_string()]);
}

#[tokio::test]
async fn a_write_changes_only_its_key_and_the_version_guards_the_next() {
    let home = tempfile::tempdir().unwrap();
    let (mut daemon, _provider) = daemon_with(home.path(), ORIGINAL, &[]).await;
    let version = user_version(&mut daemon).await;

    let written = daemon
        .ok(
            "config/value/write",
            json!({"keyPath": "model_reasoning_effort", "value": "high",
                   "mergeStrategy": "replace", "expectedVersion": version}),
        )
        .await;
    let expected = ORIGINAL.replace("\"low\"   # fast", "\"high\"   # fast");
    assert_eq!(read(home.path()), expected);
    assert_eq!(written["status"], "ok");
    assert_eq!(written["overriddenMetadata"], Value::Null);
    let file = std::fs::canonicalize(home.path().join("config.toml")).unwrap();
    assert_eq!(written["filePath"], file.display().to_string());
    // config/read sees the written file and the version the write reported.
    let after = daemon.ok("config/read", json!({})).await;
    assert_eq!(after["config"]["model_reasoning_effort"], "high");
    assert_eq!(
        after["origins"]["model_reasoning_effort"]["version"],
        written["version"]
    );

    // The first version is stale now.
    let stale = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "model_reasoning_effort", "value": "low",
                   "mergeStrategy": "replace", "expectedVersion": version}),
        )
        .await;
    assert_eq!(stale["code"], -32600);
    assert_eq!(
        stale["data"]["config_write_error_code"],
        "configVersionConflict"
    );
    assert_eq!(read(home.path()), expected);

    // A file changed behind the daemon's back conflicts too.
    let current = written["version"].clone();
    std::fs::write(home.path().join("config.toml"), ORIGINAL).unwrap();
    let changed = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "model_reasoning_effort", "value": "medium",
                   "mergeStrategy": "replace", "expectedVersion": current}),
        )
        .await;
    assert_eq!(
        changed["data"]["config_write_error_code"],
        "configVersionConflict"
    );
    assert_eq!(read(home.path()), ORIGINAL);
    only_config_file(home.path());
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn refused_writes_leave_the_file_untouched() {
    let home = tempfile::tempdir().unwrap();
    let (mut daemon, _provider) = daemon_with(home.path(), ORIGINAL, &[]).await;

    let unknown = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "mcp_servers.docs.comand", "value": "x", "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(
        unknown["data"]["config_write_error_code"],
        "configSchemaUnknownKey"
    );
    let message = unknown["message"].as_str().unwrap();
    assert!(message.contains("`mcp_servers.docs.comand`"), "{message}");

    let wrong_kind = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "features.apply_patch_streaming_events", "value": "yes",
                   "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(
        wrong_kind["data"]["config_write_error_code"],
        "configValidationError"
    );
    assert!(
        wrong_kind["message"]
            .as_str()
            .unwrap()
            .contains("features.apply_patch_streaming_events"),
        "{wrong_kind}"
    );

    // A batch is all or nothing: the good first edit is not written either.
    let batch = daemon
        .err(
            "config/batchWrite",
            json!({"edits": [
                {"keyPath": "model_reasoning_effort", "value": "high", "mergeStrategy": "replace"},
                {"keyPath": "mcp_servers.docs.args", "value": 7, "mergeStrategy": "replace"},
            ]}),
        )
        .await;
    assert_eq!(
        batch["data"]["config_write_error_code"],
        "configValidationError"
    );

    let other_file = home.path().join("other.toml");
    let readonly = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "model_reasoning_effort", "value": "high",
                   "mergeStrategy": "replace", "filePath": other_file.display().to_string()}),
        )
        .await;
    assert_eq!(
        readonly["data"]["config_write_error_code"],
        "configLayerReadonly"
    );
    let through_value = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "model_reasoning_effort.deep", "value": 1, "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(
        through_value["data"]["config_write_error_code"],
        "configValidationError"
    );
    let empty = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "", "value": 1, "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(empty["message"], "keyPath must not be empty");

    assert_eq!(read(home.path()), ORIGINAL);
    assert!(!other_file.exists());
    only_config_file(home.path());
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn a_batch_upserts_tables_removes_keys_and_reports_flags_that_override() {
    let home = tempfile::tempdir().unwrap();
    let secret = "sk-flag-secret-4242";
    let header_flag = format!("model_providers.mock.http_headers.X-Api-Key=\"{secret}\"");
    let (mut daemon, _provider) = daemon_with(home.path(), ORIGINAL, &[header_flag.as_str()]).await;

    let written = daemon
        .ok(
            "config/batchWrite",
            json!({"edits": [
                {"keyPath": "mcp_servers.docs", "value": {"args": ["--verbose"], "cwd": "/tmp"},
                 "mergeStrategy": "upsert"},
                {"keyPath": "features.apply_patch_streaming_events", "value": null,
                 "mergeStrategy": "replace"},
                {"keyPath": "mcp_servers.search", "value": {"url": "http://127.0.0.1:9/mcp"},
                 "mergeStrategy": "replace"},
            ]}),
        )
        .await;
    assert_eq!(written["status"], "ok");
    assert_eq!(
        read(home.path()),
        "# my settings\n\
model_reasoning_effort = \"low\"   # fast for now\n\
\n\
# which tools\n\
[features]\n\
\n\
[mcp_servers.docs]\n\
# the docs server\n\
command = \"docs-server\"\n\
args = [\"--verbose\"]\n\
cwd = \"/tmp\"\n\
\n\
[mcp_servers.search]\n\
url = \"http://127.0.0.1:9/mcp\"\n"
    );

    // `model` is also a `-c` flag: written, but the flag stays in effect.
    let model = daemon
        .ok(
            "config/value/write",
            json!({"keyPath": "model", "value": "from-file", "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(model["status"], "okOverridden");
    let overridden = &model["overriddenMetadata"];
    assert_eq!(overridden["effectiveValue"], "gpt-5");
    assert_eq!(
        overridden["overridingLayer"]["name"],
        json!({"type": "sessionFlags"})
    );
    assert!(read(home.path()).contains("model = \"from-file\""));

    // A secret flag's value is never shown.
    let header = daemon
        .ok(
            "config/value/write",
            json!({"keyPath": "model_providers.mock.http_headers.X-Api-Key", "value": "other",
                   "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(header["status"], "okOverridden");
    assert_eq!(header["overriddenMetadata"]["effectiveValue"], "<redacted>");
    // A secret of the wrong kind is refused by key, its value never quoted.
    let wrong_secret = "sk-wrong-kind-secret-9090";
    let refused = daemon
        .err(
            "config/value/write",
            json!({"keyPath": "model_providers.mock.http_headers", "value": wrong_secret,
                   "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(
        refused["data"]["config_write_error_code"],
        "configValidationError"
    );
    let transcript = serde_json::to_string(&daemon.transcript).unwrap();
    assert!(!transcript.contains(secret), "secret in output");
    assert!(!transcript.contains(wrong_secret), "secret in output");
    assert!(!read(home.path()).contains(wrong_secret));
    assert!(
        !daemon
            .stderr()
            .iter()
            .any(|line| line.contains(secret) || line.contains(wrong_secret)),
        "secret in logs"
    );
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn skills_config_write_turns_a_skill_off_in_the_file_and_the_listing() {
    let home = tempfile::tempdir().unwrap();
    let skill = home.path().join("skills/demo");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: a demo skill\n---\nbody\n",
    )
    .unwrap();
    let (mut daemon, _provider) = daemon_with(home.path(), "# keep me\n", &[]).await;
    let cwd = home.path().display().to_string();
    let enabled = |listing: &Value| {
        listing["data"][0]["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|skill| skill["name"] == "demo")
            .map(|skill| skill["enabled"].clone())
    };
    let before = daemon.ok("skills/list", json!({"cwds": [cwd]})).await;
    assert_eq!(enabled(&before), Some(json!(true)));

    let off = daemon
        .ok(
            "skills/config/write",
            json!({"name": "demo", "enabled": false}),
        )
        .await;
    assert_eq!(off, json!({"effectiveEnabled": false}));
    assert_eq!(
        read(home.path()),
        "# keep me\n\n[[skills.config]]\nenabled = false\nname = \"demo\"\n"
    );
    let after = daemon.ok("skills/list", json!({"cwds": [cwd]})).await;
    assert_eq!(enabled(&after), Some(json!(false)));

    // Turning it on again updates the same entry rather than adding one.
    let on = daemon
        .ok(
            "skills/config/write",
            json!({"name": "demo", "enabled": true}),
        )
        .await;
    assert_eq!(on, json!({"effectiveEnabled": true}));
    assert_eq!(read(home.path()).matches("[[skills.config]]").count(), 1);

    let neither = daemon
        .err("skills/config/write", json!({"enabled": true}))
        .await;
    assert_eq!(neither["code"], -32602);
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn requirements_and_hooks_say_there_are_none() {
    let home = tempfile::tempdir().unwrap();
    let (mut daemon, _provider) = daemon_with(home.path(), ORIGINAL, &[]).await;
    let requirements = daemon.ok("configRequirements/read", json!({})).await;
    assert_eq!(requirements["requirements"], Value::Null);
    let cwd = home.path().display().to_string();
    let hooks = daemon.ok("hooks/list", json!({"cwds": [cwd]})).await;
    assert_eq!(
        hooks,
        json!({"data": [{"cwd": cwd, "hooks": [], "warnings": [], "errors": []}]})
    );
    daemon.exit_cleanly().await;
}
