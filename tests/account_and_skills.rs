//! `account/*` and `skills/*` through the real binary, with every answer checked against the
//! reference schema by the test support:
//! - an API key given with `account/login/start` is stored 0600 in `$OPENTURN_HOME/auth.json`,
//!   reported by `account/read`, sent to a provider that takes OpenAI sign-in
//!   (`requires_openai_auth = true`) and has no key of its own, never to one that does not, never
//!   echoed on stdout or stderr, and removed by `account/logout`; the notifications follow the
//!   answer; `requiresOpenaiAuth` is the active provider's `requires_openai_auth`;
//! - ChatGPT sign-in is refused with an error that says what to use instead;
//! - `skills/list` lists the `SKILL.md` files on disk (user and repo scope) and reports a bad
//!   one as an error entry; `skills/extraRoots/set` adds a folder; `[[skills.config]]` turns a
//!   skill off; each turn's request names the enabled skills to the model in a developer
//!   message, with their paths.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

const SECRET: &str = "sk-stored-by-login-0123456789";

/// The mock provider with no `env_key`.
fn keyless_overrides(provider: &MockProvider) -> Vec<String> {
    mock_overrides(provider)
        .into_iter()
        .filter(|o| !o.starts_with("model_providers.mock.env_key"))
        .collect()
}

/// The mock provider with no `env_key`, taking OpenAI sign-in: only a stored key can
/// authenticate to it.
fn signed_in_overrides(provider: &MockProvider) -> Vec<String> {
    let mut overrides = keyless_overrides(provider);
    overrides.push("model_providers.mock.requires_openai_auth=true".to_string());
    overrides
}

#[tokio::test]
async fn an_api_key_login_is_stored_used_reported_and_removed_by_logout() {
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["with key"]),
        message_reply("r2", "m2", &["without key"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &signed_in_overrides(&provider));
    daemon.initialize().await;

    let before = daemon
        .ok("account/read", json!({"refreshToken": false}))
        .await;
    assert_eq!(
        before,
        json!({"account": null, "userId": null, "requiresOpenaiAuth": true})
    );

    let login = daemon
        .request(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": SECRET}),
        )
        .await;
    assert_eq!(login["result"], json!({"type": "apiKey"}));
    // Both notifications come after the answer, completed first.
    let completed = daemon.next_message().await;
    assert_eq!(completed["method"], "account/login/completed");
    assert_eq!(
        completed["params"],
        json!({"loginId": null, "success": true, "error": null, "onboardingEntrypoint": null})
    );
    let updated = daemon.next_message().await;
    assert_eq!(updated["method"], "account/updated");
    assert_eq!(
        updated["params"],
        json!({"authMode": "apikey", "planType": null})
    );

    let stored = home.path().join("auth.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&stored).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "auth.json must be private");
    let after = daemon.ok("account/read", json!({})).await;
    assert_eq!(after["account"], json!({"type": "apiKey"}));

    // A provider taking sign-in, without `env_key`, authenticates with the stored key.
    let thread_id = daemon.start_thread(json!({})).await;
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    daemon.until_turn_completed().await;
    let requests = provider.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );

    let logout = daemon.request("account/logout", json!(null)).await;
    assert_eq!(logout["result"], json!({}));
    let updated = daemon.notification("account/updated").await;
    assert_eq!(
        updated["params"],
        json!({"authMode": null, "planType": null})
    );
    assert!(!stored.exists(), "logout removes the stored key");
    let after_logout = daemon.ok("account/read", json!({})).await;
    assert_eq!(after_logout["account"], Value::Null);

    // After logout the same provider is called without a key.
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "again"}]}),
        )
        .await;
    daemon.until_turn_completed().await;
    assert_eq!(provider.requests()[1].header("authorization"), None);

    // The key never appears in anything the daemon wrote.
    let transcript = serde_json::to_string(&daemon.transcript).unwrap_or_default();
    assert!(!transcript.contains(SECRET), "key echoed on stdout");
    daemon.close_stdin();
    let _ = tokio::time::timeout(TIMEOUT, daemon.child.wait()).await;
    assert!(
        !daemon.stderr().join("\n").contains(SECRET),
        "key written to the log"
    );
}

/// A daemon with `overrides` in `home`: what `account/read` reports, then one turn.
async fn read_and_run_a_turn(home: &std::path::Path, overrides: Vec<String>) -> Value {
    let mut daemon = Daemon::spawn(home, &overrides);
    daemon.initialize().await;
    let read = daemon.ok("account/read", json!({})).await;
    let thread_id = daemon.start_thread(json!({})).await;
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    daemon.until_turn_completed().await;
    read
}

#[tokio::test]
async fn requires_openai_auth_decides_who_gets_the_stored_key_and_what_account_read_says() {
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["keyless"]),
        message_reply("r2", "m2", &["own key"]),
        message_reply("r3", "m3", &["signed in"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("auth.json"),
        format!(r#"{{"auth_mode": "apikey", "OPENAI_API_KEY": "{SECRET}"}}"#),
    )
    .unwrap();
    // A provider that does not take sign-in never receives the stored key and has no account.
    let read = read_and_run_a_turn(home.path(), keyless_overrides(&provider)).await;
    assert_eq!(
        read,
        json!({"account": null, "userId": null, "requiresOpenaiAuth": false})
    );
    // Its own `env_key` still authenticates it, and sign-in is still not its business.
    let read = read_and_run_a_turn(home.path(), mock_overrides(&provider)).await;
    assert_eq!(read["requiresOpenaiAuth"], false, "{read}");
    // With `requires_openai_auth = true` the stored key is its key, no `env_key` needed.
    let read = read_and_run_a_turn(home.path(), signed_in_overrides(&provider)).await;
    assert_eq!(
        read,
        json!({"account": {"type": "apiKey"}, "userId": null, "requiresOpenaiAuth": true})
    );

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].header("authorization"), None);
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer sk-test-secret-key")
    );
    assert_eq!(
        requests[2].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
}

#[tokio::test]
async fn chatgpt_sign_in_and_bad_keys_are_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &[]);
    daemon.initialize().await;
    for kind in ["chatgpt", "chatgptDeviceCode", "chatgptAuthTokens"] {
        let error = daemon
            .err("account/login/start", json!({"type": kind}))
            .await;
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("not supported") && message.contains("apiKey"),
            "{error}"
        );
    }
    let empty = daemon
        .err(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": "  "}),
        )
        .await;
    assert_eq!(empty["code"], -32602, "{empty}");
    assert!(empty["message"]
        .as_str()
        .unwrap_or_default()
        .contains("apiKey"));
    let unknown = daemon
        .err("account/login/start", json!({"type": "magic"}))
        .await;
    assert!(unknown["message"]
        .as_str()
        .unwrap_or_default()
        .contains("magic"));
    let cancel = daemon
        .ok("account/login/cancel", json!({"loginId": "0e0c4ab2"}))
        .await;
    assert_eq!(cancel, json!({"status": "notFound"}));
    assert!(!home.path().join("auth.json").exists());
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap_or(std::path::Path::new("/"))).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn skills_on_disk_are_listed_and_named_to_the_model() {
    let provider = MockProvider::start(Script::new([message_reply("r1", "m1", &["ok"])]))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    let user_skill = home.path().join("skills/release-notes/SKILL.md");
    write(
        &user_skill,
        "---\nname: release-notes\ndescription: Write release notes from the git log\n---\nSteps.\n",
    );
    let repo_skill = project.path().join(".agents/skills/migrate/SKILL.md");
    write(
        &repo_skill,
        "---\nname: migrate\ndescription: \"Run: database migrations\"\n---\n",
    );
    let broken = home.path().join("skills/broken/SKILL.md");
    write(&broken, "no front matter here\n");
    let extra_skill = extra.path().join("lint/SKILL.md");
    write(
        &extra_skill,
        "---\nname: lint\ndescription: Lint the code\n---\n",
    );

    // `[[skills.config]]` turns the extra root's skill off by name.
    let mut overrides = mock_overrides(&provider);
    overrides.push(r#"skills.config=[{name = "lint", enabled = false}]"#.to_string());
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let cwd = project.path().display().to_string();
    let listing = daemon.ok("skills/list", json!({"cwds": [cwd]})).await;
    let entry = &listing["data"][0];
    assert_eq!(entry["cwd"], json!(cwd));
    let skills: Vec<(String, String, String, bool)> = entry["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_string(),
                s["scope"].as_str().unwrap_or_default().to_string(),
                s["path"].as_str().unwrap_or_default().to_string(),
                s["enabled"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        skills,
        vec![
            (
                "migrate".into(),
                "repo".into(),
                repo_skill.display().to_string(),
                true
            ),
            (
                "release-notes".into(),
                "user".into(),
                user_skill.display().to_string(),
                true
            ),
        ]
    );
    assert_eq!(
        entry["skills"][0]["description"],
        "Run: database migrations"
    );
    assert_eq!(entry["errors"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        entry["errors"][0]["path"],
        json!(broken.display().to_string())
    );

    let relative = daemon
        .err(
            "skills/extraRoots/set",
            json!({"extraRoots": ["relative/dir"]}),
        )
        .await;
    assert!(relative["message"]
        .as_str()
        .unwrap_or_default()
        .contains("relative/dir"));
    daemon
        .ok(
            "skills/extraRoots/set",
            json!({"extraRoots": [extra.path().display().to_string()]}),
        )
        .await;
    let listing = daemon.ok("skills/list", json!({"cwds": [cwd]})).await;
    let names: Vec<&str> = listing["data"][0]["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, vec!["migrate", "lint", "release-notes"]);
    let enabled: Vec<bool> = listing["data"][0]["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["enabled"].as_bool())
        .collect();
    assert_eq!(enabled, vec![true, false, true]);

    // The turn's request carries a developer message naming each skill and its SKILL.md.
    let thread_id = daemon.start_thread(json!({"cwd": cwd})).await;
    daemon
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    daemon.until_turn_completed().await;
    let body = &provider.requests()[0].body;
    let developer: Vec<&str> = body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == "developer")
        .filter_map(|item| item["content"][0]["text"].as_str())
        .collect();
    let section = developer
        .iter()
        .find(|text| text.contains("<skills_instructions>"))
        .unwrap_or_else(|| panic!("no skills section in {body}"));
    for (name, path) in [
        ("migrate: Run: database migrations", &repo_skill),
        (
            "release-notes: Write release notes from the git log",
            &user_skill,
        ),
    ] {
        assert!(
            section.contains(&format!("- {name} (file: {})", path.display())),
            "{section}"
        );
    }
    // A disabled skill and a broken file are not offered to the model.
    assert!(
        !section.contains(&extra_skill.display().to_string()),
        "{section}"
    );
    assert!(!section.contains("broken"), "{section}");
}
