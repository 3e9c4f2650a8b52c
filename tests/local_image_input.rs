//! A `localImage` input is read from disk and sent as the reference sends it: an `input_image`
//! with a `data:` URL (type read from the bytes), between `<image name=[Image #N] path="…">` and
//! `</image>` texts. A file that is missing, too large or not an image fails `turn/start` with
//! -32602 (naming the problem in `data.reason`) before anything happens: no turn, nothing stored,
//! nothing sent upstream.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use base64::Engine;
use serde_json::{json, Value};
use support::*;
use turn_support::*;

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xC9, 0xFE, 0x92, 0xEF, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E,
    0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// The start of a JPEG file (SOI + APP0), enough for its type to be recognised.
const JPEG: &[u8] = &[
    0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00,
];

fn data_url(mime: &str, bytes: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    format!("data:{mime};base64,{encoded}")
}

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// The content of the last user message of a request body.
fn last_user_content(body: &Value) -> Value {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|item| item["role"] == "user")
        .map(|item| item["content"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn local_images_are_sent_as_data_urls_between_image_tags() {
    let work = tempfile::tempdir().unwrap();
    let png = write(work.path(), "dot.png", PNG);
    // Named .png, but JPEG bytes: the content decides the type.
    write(work.path(), "photo.png", JPEG);
    let mut s = session(
        Script::new([text_reply(0, "seen")]),
        &[],
        json!({"cwd": work.path().display().to_string()}),
    )
    .await;
    let input = json!([
        {"type": "text", "text": "look"},
        {"type": "localImage", "path": png},
        {"type": "localImage", "path": "photo.png", "detail": "low"},
    ]);
    s.daemon
        .ok(
            "turn/start",
            json!({"threadId": s.thread_id, "input": input}),
        )
        .await;
    let turn = s.daemon.until_turn_completed().await;
    single_turn_end(&turn, "completed");
    let bodies = s.bodies(1).await;
    assert_eq!(
        last_user_content(&bodies[0]),
        json!([
            {"type": "input_text", "text": "look"},
            {"type": "input_text", "text": format!("<image name=[Image #1] path=\"{png}\">")},
            {"type": "input_image", "image_url": data_url("image/png", PNG), "detail": "high"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "<image name=[Image #2] path=\"photo.png\">"},
            {"type": "input_image", "image_url": data_url("image/jpeg", JPEG), "detail": "low"},
            {"type": "input_text", "text": "</image>"},
        ])
    );
    // The client's user message keeps the input as given.
    let user = items_of(&turn, "item/completed", "userMessage");
    assert_eq!(user[0]["content"][1]["path"], png.as_str());
    assert_eq!(user[0]["content"][2]["detail"], "low");
}

#[tokio::test]
async fn an_unusable_local_image_fails_turn_start_and_nothing_is_stored_or_sent() {
    let work = tempfile::tempdir().unwrap();
    let text_file = write(work.path(), "notes.png", b"just text");
    let huge = work.path().join("huge.png");
    let file = std::fs::File::create(&huge).unwrap();
    // Sparse: 20 MiB + 1 byte without writing them.
    file.set_len(20 * 1024 * 1024 + 1).unwrap();
    let missing = work.path().join("missing.png").display().to_string();
    let mut s = session(
        Script::new([text_reply(0, "fine")]),
        &[],
        json!({"cwd": work.path().display().to_string()}),
    )
    .await;
    let cases = [
        (missing.clone(), "local_image_unreadable"),
        (text_file.clone(), "local_image_unsupported"),
        (huge.display().to_string(), "local_image_too_large"),
    ];
    for (path, reason) in &cases {
        let error = s
            .daemon
            .err(
                "turn/start",
                json!({"threadId": s.thread_id, "model": "gpt-5-mini",
                       "input": [{"type": "text", "text": "look"},
                                 {"type": "localImage", "path": path}]}),
            )
            .await;
        assert_eq!(error["code"], -32602, "{error}");
        assert_eq!(error["data"], json!({"reason": reason, "path": path}));
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(path.as_str()), "{message}");
    }
    // The thread is untouched: the next turn runs as if those requests never came, with the
    // model the refused requests named never applied.
    let turn = s.run_turn("hello").await;
    single_turn_end(&turn, "completed");
    assert_eq!(params_of(&turn, "turn/started").len(), 1);
    let bodies = s.bodies(1).await;
    assert_eq!(s.provider.requests().len(), 1);
    assert_eq!(bodies[0]["model"], "gpt-5");
    let users: Vec<&Value> = bodies[0]["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == "user")
        .collect();
    // The environment context, then the user's only message.
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(users[0]["content"][0]["text"]
        .as_str()
        .is_some_and(|text| text.starts_with("<environment_context>")));
    assert_eq!(last_user_content(&bodies[0])[0]["text"], "hello");
    let stored = s.rollout();
    assert_eq!(
        stored
            .iter()
            .filter(|l| l["type"] == "turn_started")
            .count(),
        1
    );
    assert!(!stored
        .iter()
        .any(|line| line.to_string().contains("missing.png")));
}

#[tokio::test]
async fn steered_local_images_are_checked_before_they_join_the_running_turn() {
    let work = tempfile::tempdir().unwrap();
    write(work.path(), "dot.png", PNG);
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_1", "lookup", json!({}))
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_2", &["seen"]);
    let params = json!({"cwd": work.path().display().to_string(),
        "dynamicTools": [{"name": "lookup", "description": "Look up",
            "inputSchema": {"type": "object"}}]});
    let mut s = session(Script::new([first, second]), &[], params).await;
    let started = s.start_turn("first", json!({})).await;
    let turn_id = started["result"]["turn"]["id"].clone();
    let mut messages = s
        .daemon
        .collect_until(|m| m["method"] == "item/tool/call")
        .await;
    let tool_request = messages.last().cloned().unwrap_or_default();
    let steer = |path: &str| {
        json!({"threadId": s.thread_id, "expectedTurnId": turn_id,
               "input": [{"type": "localImage", "path": path}]})
    };
    let (refused, accepted) = (steer("nowhere.png"), steer("dot.png"));
    let error = s.daemon.err("turn/steer", refused).await;
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["reason"], "local_image_unreadable");
    let steered = s.daemon.ok("turn/steer", accepted).await;
    assert_eq!(steered["turnId"], turn_id);
    let answer = json!({"contentItems": [{"type": "inputText", "text": "found"}], "success": true});
    s.answer(&tool_request["id"], answer).await;
    messages.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&messages, "completed");
    // Only the accepted image joined the turn: one steered user message, carrying it.
    assert_eq!(
        items_of(&messages, "item/completed", "userMessage").len(),
        2
    );
    let bodies = s.bodies(2).await;
    assert_eq!(
        last_user_content(&bodies[1])[1],
        json!({"type": "input_image", "image_url": data_url("image/png", PNG), "detail": "high"})
    );
}
