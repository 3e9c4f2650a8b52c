//! `review/start` through the real binary, in a real git repository (a `main` branch, a
//! feature branch with a commit, uncommitted changes): the review is a turn of the thread with
//! `enteredReviewMode` / `exitedReviewMode` items; the reviewer's request starts from a fresh
//! context (the review guidelines, the environment, the prompt — none of the thread's history);
//! its JSON answer is rendered into the report the client sees, which the thread's history then
//! keeps; each target names what to diff (the merge base of a base branch, the commit); a
//! `detached` review runs on a new thread; bad targets are refused with -32602 naming the field.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// What the reviewer answers: one finding, and a verdict.
const ANSWER: &str = r#"{"findings":[{"title":"[P1] Dirty line","body":"The new line breaks the file.","confidence_score":0.9,"priority":1,"code_location":{"absolute_file_path":"/repo/a.txt","line_range":{"start":3,"end":3}}}],"overall_correctness":"patch is incorrect","overall_explanation":"One line is wrong.","overall_confidence_score":0.8}"#;

const REPORT: &str = "One line is wrong.\n\nFull review comments:\n\n- [P1] Dirty line \u{2014} /repo/a.txt:3-3\n  The new line breaks the file.";

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A repository on branch `feature`, one commit past `main`, with uncommitted changes.
fn repository() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "first"]);
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\n").unwrap();
    git(dir, &["commit", "-qam", "second: add two"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\ndirty\n").unwrap();
    std::fs::write(dir.join("b.txt"), "untracked\n").unwrap();
    repo
}

async fn review_session(script: Script, repo: &Path) -> Session {
    session(script, &[], json!({"cwd": repo.display().to_string()})).await
}

/// `(method, item type)` of every item notification.
fn item_kinds(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter(|m| m["method"] == "item/started" || m["method"] == "item/completed")
        .map(|m| {
            (
                m["method"].as_str().unwrap().to_string(),
                m["params"]["item"]["type"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn review(s: &mut Session, target: Value) -> (Value, Vec<Value>) {
    let response = s
        .daemon
        .ok(
            "review/start",
            json!({"threadId": s.thread_id, "target": target}),
        )
        .await;
    let messages = s.daemon.until_turn_completed().await;
    (response, messages)
}

#[tokio::test]
async fn a_review_runs_in_a_fresh_context_and_its_report_is_rendered_and_kept() {
    let repo = repository();
    let script = Script::new([
        text_reply(0, "earlier answer"),
        text_reply(1, ANSWER),
        text_reply(2, "after the review"),
    ]);
    let mut s = review_session(script, repo.path()).await;
    s.run_turn("an earlier question").await;
    let (response, messages) = review(&mut s, json!({"type": "uncommittedChanges"})).await;

    assert_eq!(response["reviewThreadId"], s.thread_id.as_str());
    assert_eq!(response["turn"]["status"], "inProgress");
    assert_eq!(response["turn"]["items"][0]["type"], "userMessage");
    assert_eq!(
        response["turn"]["items"][0]["content"][0]["text"],
        "current changes"
    );
    let kinds = item_kinds(&messages);
    let expected: Vec<(String, String)> = [
        ("item/started", "enteredReviewMode"),
        ("item/completed", "enteredReviewMode"),
        ("item/started", "userMessage"),
        ("item/completed", "userMessage"),
        ("item/started", "exitedReviewMode"),
        ("item/completed", "exitedReviewMode"),
        ("item/started", "agentMessage"),
        ("item/completed", "agentMessage"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(kinds, expected, "{messages:#?}");
    let entered = items_of(&messages, "item/completed", "enteredReviewMode");
    assert_eq!(entered[0]["review"], "current changes");
    let exited = items_of(&messages, "item/completed", "exitedReviewMode");
    assert_eq!(exited[0]["review"], REPORT);
    let agent = items_of(&messages, "item/completed", "agentMessage");
    assert_eq!(agent[0]["text"], REPORT);
    // The raw JSON never reaches the client.
    assert!(
        !messages
            .iter()
            .any(|m| m.to_string().contains("overall_correctness")),
        "{messages:#?}"
    );
    let end = single_turn_end(&messages, "completed");
    assert_eq!(end["items"][0]["text"], REPORT);

    let bodies = s.bodies(2).await;
    let reviewer = &bodies[1];
    let users = user_texts(reviewer);
    assert!(
        !users.iter().any(|t| t.contains("an earlier question")),
        "the review request carried the thread's history: {users:?}"
    );
    assert!(
        !assistant_texts(reviewer)
            .iter()
            .any(|t| t.contains("earlier answer")),
        "{reviewer}"
    );
    assert!(
        users.last().unwrap().contains("not yet committed"),
        "{users:?}"
    );
    assert!(
        users.iter().any(|t| t.contains("<environment_context>")),
        "{users:?}"
    );
    assert!(
        developer_texts(reviewer)
            .iter()
            .any(|t| t.contains("How to review this change")),
        "{reviewer}"
    );

    // The thread's next request knows the review and its report.
    s.run_turn("fix it").await;
    let bodies = s.bodies(3).await;
    let next = &bodies[2];
    let users = user_texts(next);
    assert!(
        users.iter().any(|t| t.contains("an earlier question")),
        "{users:?}"
    );
    assert!(
        users
            .iter()
            .any(|t| t.contains("<review_result>") && t.contains(REPORT)),
        "{users:?}"
    );
    assert!(assistant_texts(next).iter().any(|t| t == REPORT), "{next}");
    assert!(
        !users.iter().any(|t| t.contains("not yet committed")),
        "{users:?}"
    );

    // A resume shows the review items in their turn.
    let read = s
        .daemon
        .ok(
            "thread/read",
            json!({"threadId": s.thread_id, "includeTurns": true}),
        )
        .await;
    let review_turn = &read["thread"]["turns"][1];
    let types: Vec<&str> = review_turn["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"enteredReviewMode") && types.contains(&"exitedReviewMode"),
        "{read}"
    );
}

#[tokio::test]
async fn each_target_names_what_to_review() {
    let repo = repository();
    let base = git(repo.path(), &["merge-base", "HEAD", "main"]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let script = Script::new([
        text_reply(0, ANSWER),
        text_reply(1, ANSWER),
        text_reply(2, "plain words, not JSON"),
    ]);
    let mut s = review_session(script, repo.path()).await;

    let (_, messages) = review(&mut s, json!({"type": "baseBranch", "branch": "main"})).await;
    let entered = items_of(&messages, "item/completed", "enteredReviewMode");
    assert_eq!(entered[0]["review"], "changes against 'main'");
    let (_, messages) = review(
        &mut s,
        json!({"type": "commit", "sha": head, "title": "second: add two"}),
    )
    .await;
    let entered = items_of(&messages, "item/completed", "enteredReviewMode");
    assert_eq!(
        entered[0]["review"],
        format!("commit {}: second: add two", &head[..7])
    );
    let (_, messages) = review(
        &mut s,
        json!({"type": "custom", "instructions": "Check the spelling"}),
    )
    .await;
    // An answer that is not the JSON object is shown as the reviewer wrote it.
    let exited = items_of(&messages, "item/completed", "exitedReviewMode");
    assert_eq!(exited[0]["review"], "plain words, not JSON");

    let bodies = s.bodies(3).await;
    let prompt = |n: usize| user_texts(&bodies[n]).last().cloned().unwrap();
    assert!(
        prompt(0).contains(&format!("git diff {base}")),
        "{}",
        prompt(0)
    );
    assert!(prompt(1).contains(&head) && prompt(1).contains("second: add two"));
    assert_eq!(prompt(2), "Check the spelling");

    for (target, field) in [
        (
            json!({"type": "baseBranch", "branch": " "}),
            "target.branch",
        ),
        (
            json!({"type": "commit", "sha": "", "title": null}),
            "target.sha",
        ),
        (
            json!({"type": "custom", "instructions": ""}),
            "target.instructions",
        ),
        (json!({"type": "bogus"}), "target"),
    ] {
        let error = s
            .daemon
            .err(
                "review/start",
                json!({"threadId": s.thread_id, "target": target}),
            )
            .await;
        assert_eq!(error["code"], -32602, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains(field),
            "{error} should name {field}"
        );
    }
}

#[tokio::test]
async fn a_detached_review_runs_on_a_thread_of_its_own() {
    let repo = repository();
    let script = Script::new([text_reply(0, ANSWER), text_reply(1, "parent answer")]);
    let mut s = review_session(script, repo.path()).await;
    let response = s
        .daemon
        .ok(
            "review/start",
            json!({"threadId": s.thread_id, "target": {"type": "uncommittedChanges"},
                   "delivery": "detached"}),
        )
        .await;
    let review_thread = response["reviewThreadId"].as_str().unwrap().to_string();
    assert_ne!(review_thread, s.thread_id);
    let messages = s.daemon.until_turn_completed().await;
    let started = params_of(&messages, "thread/started");
    assert_eq!(started[0]["thread"]["id"], review_thread.as_str());
    let completed = params_of(&messages, "turn/completed");
    assert_eq!(completed[0]["threadId"], review_thread.as_str());
    let exited = items_of(&messages, "item/completed", "exitedReviewMode");
    assert_eq!(exited[0]["review"], REPORT);

    // The reviewed thread's own history did not take the review.
    s.run_turn("carry on").await;
    let bodies = s.bodies(2).await;
    assert!(
        !user_texts(&bodies[1])
            .iter()
            .any(|t| t.contains("<review_result>")),
        "{}",
        bodies[1]
    );
}

#[tokio::test]
async fn interrupting_a_review_stops_the_reviewer_and_the_thread_takes_turns_again() {
    let repo = repository();
    let script = Script::new([
        stalled_text_reply("msg_stalled", &["{\"findings\":"]),
        text_reply(1, "after"),
    ]);
    let mut s = review_session(script, repo.path()).await;
    let response = s
        .daemon
        .ok(
            "review/start",
            json!({"threadId": s.thread_id, "target": {"type": "uncommittedChanges"}}),
        )
        .await;
    let turn_id = response["turn"]["id"].as_str().unwrap().to_string();
    // The reviewer's request is in flight, its answer stalled.
    s.bodies(1).await;
    s.daemon
        .ok(
            "turn/interrupt",
            json!({"threadId": s.thread_id, "turnId": turn_id}),
        )
        .await;
    let messages = s.daemon.until_turn_completed().await;
    single_turn_end(&messages, "interrupted");
    assert!(items_of(&messages, "item/completed", "exitedReviewMode").is_empty());
    let after = s.run_turn("next").await;
    single_turn_end(&after, "completed");
}
