//! `openturn exec` accepts the whole command line the TypeScript SDK builds — options before
//! `resume ID`, `--image` after it — and each option reaches the thread: the model and working
//! directory of the thread, the image in the prompt. Bad values are refused with an error naming
//! the option.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use exec_support::*;
use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// The JPEG magic (SOI + APP0): enough for its type to be recognised.
const JPEG: &[u8] = &[
    0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00,
];

#[tokio::test]
async fn the_sdks_full_command_line_with_resume_and_images_is_accepted() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let image = work.path().join("photo.jpg");
    std::fs::write(&image, JPEG).unwrap();
    let schema = work.path().join("schema.json");
    std::fs::write(&schema, r#"{"type":"object"}"#).unwrap();
    let mock = MockProvider::start(Script::new([
        message_reply("r1", "m1", &["first"]),
        message_reply("r2", "m2", &["second"]),
    ]))
    .await
    .unwrap();
    let first = exec(home.path(), &mock, &["--json", "hello"], "").await;
    assert_eq!(first.code, Some(0), "{first:#?}");
    let thread_id = first.events()[0]["thread_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let (cwd, image, schema) = (
        work.path().display().to_string(),
        image.display().to_string(),
        schema.display().to_string(),
    );
    let args = [
        "--experimental-json",
        "--config",
        "model_reasoning_effort=\"low\"",
        "--model",
        "gpt-5-mini",
        "--sandbox",
        "workspace-write",
        "--cd",
        &cwd,
        "--add-dir",
        "/tmp",
        "--add-dir",
        "/var/tmp",
        "--skip-git-repo-check",
        "--output-schema",
        &schema,
        "resume",
        &thread_id,
        "--image",
        &image,
    ];
    let second = exec(home.path(), &mock, &args, "look at this").await;
    assert_eq!(second.code, Some(0), "{second:#?}");
    assert_eq!(second.events()[0]["thread_id"], thread_id.as_str());
    let bodies: Vec<Value> = mock
        .wait_for_requests(2, TIMEOUT)
        .await
        .into_iter()
        .map(|r| r.body)
        .collect();
    assert_eq!(bodies[1]["model"], "gpt-5-mini");
    assert_eq!(bodies[1]["reasoning"]["effort"], "low");
    assert_eq!(
        bodies[1]["text"]["format"]["schema"],
        json!({"type": "object"})
    );
    let input = bodies[1]["input"].to_string();
    assert!(input.contains("data:image/jpeg;base64,"), "{input}");
    assert!(input.contains("look at this"), "{input}");
    assert!(
        input.contains(&cwd),
        "the working directory reaches the model: {input}"
    );
}

#[tokio::test]
async fn bad_values_name_the_option_and_nothing_is_sent() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockProvider::start(Script::new([])).await.unwrap();
    for (args, expected) in [
        (
            vec!["--json", "--sandbox", "everything", "x"],
            "--sandbox `everything`",
        ),
        (
            vec!["--json", "--cd", "/no/such/dir", "x"],
            "--cd /no/such/dir",
        ),
        (
            vec!["--json", "--output-schema", "/no/such.json", "x"],
            "--output-schema /no/such.json",
        ),
    ] {
        let run = exec(home.path(), &mock, &args, "").await;
        assert_eq!(run.code, Some(1), "{args:?}: {run:#?}");
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn a_turn_that_cannot_start_still_ends_the_events_with_turn_failed() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockProvider::start(Script::new([])).await.unwrap();
    let run = exec(
        home.path(),
        &mock,
        &["--json", "--image", "/no/such/picture.png", "look"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(1), "{run:#?}");
    let events = run.events();
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(types, ["thread.started", "turn.failed"]);
    let message = events[1]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("turn/start") && message.contains("/no/such/picture.png"),
        "{message}"
    );
    assert!(
        run.stderr.contains("/no/such/picture.png"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
}
