//! What the model is told about where it works, through the real binary: the `AGENTS.md` files
//! (the user's own in openturn's home, then the project's from the repository root down to the
//! cwd) and an `<environment_context>` block go as one user message before the first user
//! input; the block is told again only when a `turn/start` override changes it, with the new
//! cwd's `AGENTS.md` when the cwd moved; a cut `AGENTS.md` is said in the text and in a
//! `warning`; and a thread resumed after a daemon restart sends exactly the context the original
//! recorded.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::*;

/// A repository with `AGENTS.md` at its root and in `sub/`; returns (tempdir, root, sub).
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("repo");
    let sub = root.join("sub");
    for folder in [root.join(".git"), sub.clone()] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let write = |path: &Path, text: &str| std::fs::write(path, text).unwrap();
    write(&dir.path().join("AGENTS.md"), "outside the repository");
    write(&root.join("AGENTS.md"), "Root rule: run the tests.");
    write(&sub.join("AGENTS.md"), "Sub rule: keep functions short.");
    (dir, root, sub)
}

/// The input texts of every user message of a request, message by message.
fn user_texts(body: &Value) -> Vec<Vec<String>> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "message" && item["role"] == "user")
        .map(|item| {
            item["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|piece| piece["text"].as_str().map(str::to_string))
                .collect()
        })
        .collect()
}

fn environment_blocks(body: &Value) -> Vec<String> {
    user_texts(body)
        .into_iter()
        .flatten()
        .filter(|text| text.starts_with("<environment_context>"))
        .collect()
}

fn start_turn_params(thread_id: &str, text: &str, extra: Value) -> Value {
    let mut params = json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]});
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    params
}

async fn turn(daemon: &mut Daemon, thread_id: &str, text: &str, extra: Value) -> Vec<Value> {
    daemon
        .ok("turn/start", start_turn_params(thread_id, text, extra))
        .await;
    daemon.until_turn_completed().await
}

#[tokio::test]
async fn agents_md_root_first_and_the_environment_precede_the_first_input_and_changes_are_told() {
    let (_dir, root, sub) = repository();
    let mock = provider(vec![
        text_reply(0, "a"),
        text_reply(1, "b"),
        text_reply(2, "c"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&mock));
    daemon.initialize().await;
    let id = daemon
        .start_thread(json!({"cwd": sub, "sandbox": "read-only", "approvalPolicy": "never"}))
        .await;
    turn(&mut daemon, &id, "first", json!({})).await;
    turn(
        &mut daemon,
        &id,
        "second",
        json!({"cwd": root, "sandboxPolicy": {"type": "dangerFullAccess"}}),
    )
    .await;
    turn(&mut daemon, &id, "third", json!({})).await;
    let bodies: Vec<Value> = mock
        .wait_for_requests(3, TIMEOUT)
        .await
        .into_iter()
        .map(|request| request.body)
        .collect();

    let first = user_texts(&bodies[0]);
    assert_eq!(first.len(), 2, "{first:#?}");
    assert_eq!(first[1], vec!["first".to_string()]);
    assert_eq!(
        first[0].len(),
        2,
        "AGENTS.md and the environment in one message"
    );
    assert_eq!(
        first[0][0],
        format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nRoot rule: run the tests.\n\n\
             Sub rule: keep functions short.\n</INSTRUCTIONS>",
            sub.display()
        )
    );
    let environment = &first[0][1];
    for line in [
        format!("  <cwd>{}</cwd>\n", sub.display()),
        "  <sandbox_mode>read-only</sandbox_mode>\n".to_string(),
        "  <approval_policy>never</approval_policy>\n".to_string(),
        "  <network_access>restricted</network_access>\n".to_string(),
        "  <shell>".to_string(),
        "  <current_date>".to_string(),
        "  <timezone>".to_string(),
    ] {
        assert!(
            environment.contains(&line),
            "{line} missing in {environment}"
        );
    }

    // The override changed the cwd and the sandbox: a new block, after the first turn's items
    // and before the second input, with the new cwd's AGENTS.md (the root's only) replacing the
    // earlier ones.
    let second = user_texts(&bodies[1]);
    assert_eq!(second.len(), 4, "{second:#?}");
    assert_eq!(second[..2], first[..]);
    assert_eq!(second[3], vec!["second".to_string()]);
    assert_eq!(second[2].len(), 2, "{:#?}", second[2]);
    let replaced = &second[2][0];
    assert!(
        replaced.starts_with(&format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nThe working directory changed",
            root.display()
        )) && replaced.ends_with("\n\nRoot rule: run the tests.\n</INSTRUCTIONS>"),
        "{replaced}"
    );
    let changed = &second[2][1];
    assert!(
        changed.contains(&format!("  <cwd>{}</cwd>\n", root.display())),
        "{changed}"
    );
    assert!(changed.contains("<sandbox_mode>danger-full-access</sandbox_mode>"));
    assert!(changed.contains("<network_access>enabled</network_access>"));

    // Nothing changed for the third turn: no third block.
    assert_eq!(environment_blocks(&bodies[2]).len(), 2);
}

#[tokio::test]
async fn agents_md_beyond_the_cap_is_cut_and_said_in_the_text_and_a_warning() {
    let (_dir, _root, sub) = repository();
    let mock = provider(vec![text_reply(0, "a")]).await;
    let home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&mock);
    overrides.push("project_doc_max_bytes=10".to_string());
    let mut daemon = Daemon::spawn(home.path(), &overrides);
    daemon.initialize().await;
    let id = daemon.start_thread(json!({"cwd": sub})).await;
    let messages = turn(&mut daemon, &id, "first", json!({})).await;
    let body = &mock.wait_for_requests(1, TIMEOUT).await[0].body;
    let docs = &user_texts(body)[0][0];
    assert!(
        docs.contains(
            "<INSTRUCTIONS>\nRoot rule:\n\n[AGENTS.md cut: only the first 10 of 58 bytes"
        ),
        "{docs}"
    );
    assert!(!docs.contains("Sub rule"), "{docs}");
    let warnings: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "warning")
        .collect();
    assert_eq!(warnings.len(), 1, "{messages:#?}");
    assert!(warnings[0]["params"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("project_doc_max_bytes")));
}

#[tokio::test]
async fn a_resumed_thread_sends_the_context_the_original_recorded() {
    let (_dir, _root, sub) = repository();
    let home = tempfile::tempdir().unwrap();
    let first_mock = provider(vec![text_reply(0, "a")]).await;
    let mut first = Daemon::spawn(home.path(), &mock_overrides(&first_mock));
    first.initialize().await;
    let id = first
        .start_thread(json!({"cwd": sub, "sandbox": "workspace-write"}))
        .await;
    turn(&mut first, &id, "first", json!({})).await;
    let original = first_mock.wait_for_requests(1, TIMEOUT).await[0]
        .body
        .clone();
    first.close_stdin();
    assert_eq!(first.wait_exit().await, Some(0));

    // The files change after the thread began: the resumed thread still says what it said.
    std::fs::write(sub.join("AGENTS.md"), "changed later").unwrap();
    let second_mock = provider(vec![text_reply(1, "b")]).await;
    let mut second = Daemon::spawn(home.path(), &mock_overrides(&second_mock));
    second.initialize().await;
    second.ok("thread/resume", json!({"threadId": id})).await;
    turn(&mut second, &id, "second", json!({})).await;
    let resumed = second_mock.wait_for_requests(1, TIMEOUT).await[0]
        .body
        .clone();
    let before = user_texts(&original);
    let after = user_texts(&resumed);
    assert_eq!(after.len(), 3, "{after:#?}");
    assert_eq!(
        after[..2],
        before[..],
        "the recorded context comes back as it was"
    );
    assert_eq!(after[2], vec!["second".to_string()]);
    assert_eq!(environment_blocks(&resumed).len(), 1);
}

#[tokio::test]
async fn the_base_instructions_are_our_own_unless_config_or_thread_start_says_otherwise() {
    let mock = provider(vec![
        text_reply(0, "a"),
        text_reply(1, "b"),
        text_reply(2, "c"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&mock));
    daemon.initialize().await;
    let default_thread = daemon.start_thread(json!({})).await;
    turn(&mut daemon, &default_thread, "one", json!({})).await;
    let own = daemon
        .start_thread(json!({"baseInstructions": "Only answer in haiku."}))
        .await;
    turn(&mut daemon, &own, "two", json!({})).await;
    let bodies = mock.wait_for_requests(2, TIMEOUT).await;
    let default = bodies[0].body["instructions"].as_str().unwrap_or_default();
    assert!(
        default.starts_with("You are openturn")
            && default.contains("<environment_context>")
            && default.contains("AGENTS.md")
            && default.contains("update_plan"),
        "{default}"
    );
    assert_eq!(bodies[1].body["instructions"], "Only answer in haiku.");

    let configured_home = tempfile::tempdir().unwrap();
    let mut overrides = mock_overrides(&mock);
    overrides.push("instructions=\"Be terse.\"".to_string());
    let mut configured = Daemon::spawn(configured_home.path(), &overrides);
    configured.initialize().await;
    let id = configured.start_thread(json!({})).await;
    turn(&mut configured, &id, "three", json!({})).await;
    let bodies = mock.wait_for_requests(3, TIMEOUT).await;
    assert_eq!(bodies[2].body["instructions"], "Be terse.");
}

/// The one `AGENTS.md` piece of each context message of a request, in order.
fn docs_pieces(body: &Value) -> Vec<String> {
    user_texts(body)
        .into_iter()
        .flatten()
        .filter(|text| text.starts_with("# AGENTS.md instructions"))
        .collect()
}

#[tokio::test]
async fn the_users_own_agents_md_comes_before_the_projects_and_a_new_cwd_brings_its_own() {
    let (dir, _root, sub) = repository();
    let elsewhere = dir.path().canonicalize().unwrap().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join(".git")).unwrap();
    std::fs::write(elsewhere.join("AGENTS.md"), "Elsewhere rule: use tabs.").unwrap();
    let bare = dir.path().canonicalize().unwrap().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    let mock = provider((0..5).map(|n| text_reply(n, "ok")).collect()).await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("AGENTS.md"),
        "User rule: answer briefly.\n",
    )
    .unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&mock));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({"cwd": sub})).await;
    turn(&mut daemon, &id, "one", json!({})).await;
    // The same cwd again: nothing new is told.
    turn(&mut daemon, &id, "two", json!({})).await;
    turn(&mut daemon, &id, "three", json!({"cwd": elsewhere})).await;
    // Moving off to a folder with no project file: the user's file alone, still replacing.
    turn(&mut daemon, &id, "four", json!({"cwd": bare})).await;
    let bodies: Vec<Value> = mock
        .wait_for_requests(4, TIMEOUT)
        .await
        .into_iter()
        .map(|request| request.body)
        .collect();

    let first = docs_pieces(&bodies[0]);
    assert_eq!(
        first,
        vec![format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nUser rule: answer briefly.\n\n\
             --- project-doc ---\n\nRoot rule: run the tests.\n\nSub rule: keep functions \
             short.\n</INSTRUCTIONS>",
            sub.display()
        )],
        "{:#?}",
        bodies[0]
    );
    assert_eq!(
        docs_pieces(&bodies[1]),
        first,
        "an unchanged cwd tells nothing new"
    );
    let third = docs_pieces(&bodies[2]);
    assert_eq!(third.len(), 2, "{third:#?}");
    assert!(
        third[1].starts_with(&format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nThe working directory changed",
            elsewhere.display()
        )) && third[1].ends_with(
            "User rule: answer briefly.\n\n--- project-doc ---\n\nElsewhere rule: use \
             tabs.\n</INSTRUCTIONS>"
        ),
        "{}",
        third[1]
    );
    assert!(!third[1].contains("Root rule"), "{}", third[1]);
    let fourth = docs_pieces(&bodies[3]);
    assert_eq!(fourth.len(), 3, "{fourth:#?}");
    assert!(
        fourth[2].starts_with(
            "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nThe working directory changed"
        ) && fourth[2].ends_with("\n\nUser rule: answer briefly.\n</INSTRUCTIONS>")
            && !fourth[2].contains("project-doc"),
        "{}",
        fourth[2]
    );
    // Each new cwd's docs travel with its environment block, in one message.
    let messages = user_texts(&bodies[3]);
    let last_context = &messages[messages.len() - 2];
    assert_eq!(last_context.len(), 2, "{last_context:#?}");
    assert!(last_context[1].contains(&format!("<cwd>{}</cwd>", bare.display())));
}

#[tokio::test]
async fn leaving_every_agents_md_behind_says_they_no_longer_apply() {
    let (dir, _root, sub) = repository();
    let bare = dir.path().canonicalize().unwrap().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    let other_bare = dir.path().canonicalize().unwrap().join("other");
    std::fs::create_dir_all(&other_bare).unwrap();
    let mock = provider((0..4).map(|n| text_reply(n, "ok")).collect()).await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::spawn(home.path(), &mock_overrides(&mock));
    daemon.initialize().await;
    let id = daemon.start_thread(json!({"cwd": sub})).await;
    turn(&mut daemon, &id, "one", json!({})).await;
    turn(&mut daemon, &id, "two", json!({"cwd": bare})).await;
    turn(&mut daemon, &id, "three", json!({"cwd": other_bare})).await;
    let bodies: Vec<Value> = mock
        .wait_for_requests(3, TIMEOUT)
        .await
        .into_iter()
        .map(|request| request.body)
        .collect();
    let second = docs_pieces(&bodies[1]);
    assert_eq!(second.len(), 2, "{second:#?}");
    assert!(
        second[1].starts_with("# AGENTS.md instructions\n\n<INSTRUCTIONS>\n")
            && second[1].contains("no longer apply"),
        "{}",
        second[1]
    );
    // Nothing was in force any more: the next move tells no AGENTS.md at all.
    assert_eq!(docs_pieces(&bodies[2]).len(), 2);
    assert_eq!(environment_blocks(&bodies[2]).len(), 3);
}
