//! `turn/start` takes `skill` and `mention` input items (docs/SKILLS.md, "Skill inputs"): a
//! skill's `SKILL.md` reaches the model as its own user message after the user's words, framed
//! as the reference frames it; a mention is kept on the user-message item and adds nothing for
//! the model; a skill file that cannot be read fails the request with -32602 naming it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

const SKILL_MD: &str =
    "---\nname: demo\ndescription: A demo skill.\n---\n\n# Demo\n\nAlways say BANANA.\n";

fn last_inputs(body: &Value, n: usize) -> Vec<Value> {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    input[input.len().saturating_sub(n)..].to_vec()
}

fn user_message(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// The item as the provider got it, without the fields a test does not pin.
fn shape(item: &Value) -> Value {
    json!({"type": item["type"], "role": item["role"], "content": item["content"]})
}

#[tokio::test]
async fn a_skill_item_sends_its_skill_file_and_a_mention_is_only_shown() {
    let script = Script::new([
        message_reply("r1", "m1", &["BANANA"]),
        message_reply("r2", "m2", &["seen"]),
    ]);
    let mut s = session(script, &[], json!({})).await;
    let dir = tempfile::tempdir().unwrap();
    let skill_path = dir.path().join("demo").join("SKILL.md");
    std::fs::create_dir_all(skill_path.parent().unwrap()).unwrap();
    std::fs::write(&skill_path, SKILL_MD).unwrap();
    let skill_path = skill_path.to_string_lossy().to_string();
    let skill = json!({"type": "skill", "name": "demo", "path": skill_path});
    s.daemon
        .ok(
            "turn/start",
            json!({"threadId": s.thread_id, "input": [{"type": "text", "text": "use $demo"}, skill]}),
        )
        .await;
    let turn = s.daemon.until_turn_completed().await;
    single_turn_end(&turn, "completed");
    let shown = items_of(&turn, "item/completed", "userMessage");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["content"][1], skill);
    let body = &s.bodies(1).await[0];
    let sent: Vec<Value> = last_inputs(body, 2).iter().map(shape).collect();
    assert_eq!(
        sent,
        vec![
            user_message("use $demo"),
            user_message(&format!(
                "<skill>\n<name>demo</name>\n<path>{skill_path}</path>\n{SKILL_MD}\n</skill>"
            )),
        ]
    );

    let mention = json!({"type": "mention", "name": "a.txt", "path": "/tmp/a.txt"});
    s.daemon
        .ok(
            "turn/start",
            json!({"threadId": s.thread_id, "input": [{"type": "text", "text": "see @a.txt"}, mention]}),
        )
        .await;
    let turn = s.daemon.until_turn_completed().await;
    single_turn_end(&turn, "completed");
    let shown = items_of(&turn, "item/completed", "userMessage");
    assert_eq!(shown[0]["content"][1], mention);
    let body = &s.bodies(2).await[1];
    assert_eq!(
        last_inputs(body, 1).iter().map(shape).collect::<Vec<_>>(),
        vec![user_message("see @a.txt")]
    );
}

#[tokio::test]
async fn a_skill_file_that_cannot_be_read_fails_the_request_naming_it() {
    let mut s = session(Script::new([]), &[], json!({})).await;
    let error = s
        .daemon
        .err(
            "turn/start",
            json!({"threadId": s.thread_id, "input": [
                {"type": "text", "text": "x"},
                {"type": "skill", "name": "gone", "path": "/nonexistent/gone/SKILL.md"}
            ]}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/nonexistent/gone/SKILL.md"),
        "{error}"
    );
    assert!(s.provider.requests().is_empty());
}
