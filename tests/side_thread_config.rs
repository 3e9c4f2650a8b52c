//! The configuration keys the Codex TUI sets on the side thread it starts to title a task
//! (docs/REMOTE.md), through the real binary: `skills.include_instructions = false` leaves the
//! skills message out of the thread's requests, `tools.experimental_request_user_input.enabled
//! = false` leaves `request_user_input` out of its tools, and `cloud.skills.enabled = false` is
//! what openturn does anyway; none of them warns, while a thread without them keeps both.
//! `cloud.skills.enabled = true` asks for skills openturn does not have, and warns.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The keys as the TUI's side thread sends them (observed from Codex 0.171.0).
fn side_thread_config() -> Value {
    json!({
        "skills.include_instructions": false,
        "tools.experimental_request_user_input.enabled": false,
        "cloud.skills.enabled": false,
    })
}

fn with_a_user_skill(home: &Path) {
    let skill = home.join("skills/release-notes/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: release-notes\ndescription: Write release notes from the git log\n---\nSteps.\n",
    )
    .unwrap();
}

fn names_skills(body: &Value) -> bool {
    developer_texts(body)
        .iter()
        .any(|text| text.contains("<skills_instructions>"))
}

fn warnings(daemon: &Daemon) -> Vec<Value> {
    daemon
        .transcript
        .iter()
        .filter(|message| message["method"] == "configWarning")
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_side_threads_keys_are_honoured_without_a_warning() {
    let provider = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["main"]),
        message_reply("r2", "m2", &["side"]),
    ]))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    with_a_user_skill(home.path());
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;

    let main = daemon.start_thread(json!({})).await;
    text_turn(&mut daemon, &main, "hello").await;
    let side = daemon
        .start_thread(json!({"ephemeral": true, "config": side_thread_config()}))
        .await;
    text_turn(&mut daemon, &side, "title this").await;

    let requests = provider.requests();
    let (main_body, side_body) = (&requests[0].body, &requests[1].body);
    assert!(names_skills(main_body));
    assert!(tool_names(main_body).contains(&"request_user_input".to_string()));
    assert!(!names_skills(side_body), "{}", side_body["input"]);
    let side_tools = tool_names(side_body);
    assert!(
        !side_tools.contains(&"request_user_input".to_string()),
        "{side_tools:?}"
    );
    // Only the question tool went: the rest of the set is the main thread's.
    let mut expected = tool_names(main_body);
    expected.retain(|name| name != "request_user_input");
    assert_eq!(side_tools, expected);
    assert_eq!(warnings(&daemon), Vec::<Value>::new());
}

#[tokio::test]
async fn asking_for_cloud_skills_warns_that_there_are_none() {
    let provider = MockProvider::start(Script::new([])).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&provider));
    daemon.initialize().await;
    daemon
        .start_thread(json!({"config": {"cloud.skills.enabled": true}}))
        .await;
    let warning = daemon.notification("configWarning").await;
    assert_eq!(
        warning["params"]["summary"],
        "`cloud.skills.enabled = true` in the request's `config` asks for cloud skills, which \
         openturn does not have; only the skills on this machine are offered"
    );
}
