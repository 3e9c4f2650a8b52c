//! `update_plan` and `request_user_input`, through the real binary: both are offered to the
//! model; a plan call becomes `turn/plan/updated` (steps and statuses in the protocol's casing)
//! and "Plan updated" in the follow-up request; a question goes to the client as
//! `item/tool/requestUserInput` and the client's answer — or a plain "no answer" when it errs —
//! is the output the model gets; headless `openturn exec` answers at once that no user is there.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn question_args() -> Value {
    json!({"questions": [{
        "id": "db_choice", "header": "Database", "question": "Which database should I use?",
        "options": [
            {"label": "Postgres (Recommended)", "description": "Matches production."},
            {"label": "SQLite", "description": "No server needed."}
        ]
    }]})
}

#[tokio::test]
async fn a_plan_update_reaches_the_client_and_the_model_reads_plan_updated() {
    let plan_args = json!({"explanation": "starting", "plan": [
        {"step": "Read the code", "status": "completed"},
        {"step": "Write the fix", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"}
    ]});
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_plan", "update_plan", plan_args)
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Done."]);
    // A generic model's set holds the plan tool (the gpt-5 family's, like the reference's, not).
    let model = json!({"model": "gpt-4.1"});
    let mut s = session(Script::new([first, second]), &[], model).await;
    let turn = s.run_turn("fix it").await;
    single_turn_end(&turn, "completed");
    let updates = params_of(&turn, "turn/plan/updated");
    assert_eq!(updates.len(), 1, "{turn:#?}");
    let turn_id = updates[0]["turnId"].clone();
    assert!(turn_id.as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(
        *updates[0],
        json!({"threadId": s.thread_id, "turnId": turn_id, "explanation": "starting", "plan": [
            {"step": "Read the code", "status": "completed"},
            {"step": "Write the fix", "status": "inProgress"},
            {"step": "Run the tests", "status": "pending"}
        ]})
    );
    let bodies = s.bodies(2).await;
    let names = tool_names(&bodies[0]);
    assert!(
        names.contains(&"update_plan".to_string())
            && names.contains(&"request_user_input".to_string()),
        "{names:?}"
    );
    assert_eq!(
        call_outputs(&bodies[1]),
        vec![("call_plan".to_string(), "Plan updated".to_string())]
    );
}

#[tokio::test]
async fn a_plan_with_two_steps_in_progress_is_refused_with_the_reason() {
    let plan_args = json!({"plan": [
        {"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}
    ]});
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_plan", "update_plan", plan_args)
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Done."]);
    let mut s = session(Script::new([first, second]), &[], json!({})).await;
    let turn = s.run_turn("fix it").await;
    single_turn_end(&turn, "completed");
    assert!(params_of(&turn, "turn/plan/updated").is_empty());
    let outputs = call_outputs(&s.bodies(2).await[1]);
    assert!(
        outputs[0].1.contains("at most one step may be"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn a_question_goes_to_the_client_and_its_answer_reaches_the_model() {
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_q", "request_user_input", question_args())
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["Postgres it is."]);
    let mut s = session(Script::new([first, second]), &[], json!({})).await;
    s.start_turn("set up storage", json!({})).await;
    let mut seen = Vec::new();
    let request = loop {
        let message = s.daemon.next_message().await;
        seen.push(message.clone());
        if message["method"] == "item/tool/requestUserInput" {
            break message;
        }
        assert_ne!(message["method"], "turn/completed", "{seen:#?}");
    };
    let params = &request["params"];
    assert_eq!(params["threadId"], s.thread_id.as_str());
    assert_eq!(params["itemId"], "call_q");
    assert_eq!(params["isBlocking"], true);
    assert_eq!(
        params["questions"],
        json!([{"id": "db_choice", "header": "Database",
        "question": "Which database should I use?", "isOther": true, "isSecret": false,
        "options": [
            {"label": "Postgres (Recommended)", "description": "Matches production."},
            {"label": "SQLite", "description": "No server needed."}
        ]}])
    );
    s.answer(
        &request["id"],
        json!({"answers": {"db_choice": {"answers": ["Postgres (Recommended)"]}}}),
    )
    .await;
    seen.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&seen, "completed");
    assert_eq!(params_of(&seen, "serverRequest/resolved").len(), 1);
    let outputs = call_outputs(&s.bodies(2).await[1]);
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].0, "call_q");
    let answer: Value = serde_json::from_str(&outputs[0].1).unwrap();
    assert_eq!(
        answer,
        json!({"answers": {"db_choice": {"answers": ["Postgres (Recommended)"]}}})
    );
}

#[tokio::test]
async fn a_client_that_errs_leaves_the_model_a_plain_no_answer() {
    let first = ResponseBuilder::new("r1")
        .created()
        .function_call_json("fc_1", "call_q", "request_user_input", question_args())
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["ok"]);
    let mut s = session(Script::new([first, second]), &[], json!({})).await;
    s.start_turn("set up storage", json!({})).await;
    let request = loop {
        let message = s.daemon.next_message().await;
        if message["method"] == "item/tool/requestUserInput" {
            break message;
        }
    };
    s.daemon
        .send(json!({"id": request["id"], "error": {"code": -1, "message": "user dismissed"}}))
        .await;
    let turn = s.daemon.until_turn_completed().await;
    single_turn_end(&turn, "completed");
    let outputs = call_outputs(&s.bodies(2).await[1]);
    assert!(
        outputs[0].1.starts_with("No answer") && outputs[0].1.contains("user dismissed"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn headless_exec_answers_a_question_at_once_with_no_user_available() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .function_call_json("fc_1", "call_q", "request_user_input", question_args())
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["assumed Postgres"]),
    ]))
    .await
    .unwrap();
    let run = exec_support::exec(home.path(), &mock, &["--json", "set up storage"], "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let requests = mock.wait_for_requests(2, TIMEOUT).await;
    let outputs = call_outputs(&requests[1].body);
    assert!(
        outputs[0].1.starts_with("No answer") && outputs[0].1.contains("no user is available"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn under_exec_a_plan_update_becomes_the_todo_list() {
    let home = tempfile::tempdir().unwrap();
    let plan_args = json!({"plan": [
        {"step": "Read", "status": "completed"}, {"step": "Fix", "status": "in_progress"}
    ]});
    let mock = MockProvider::start(Script::new([
        ResponseBuilder::new("r1")
            .created()
            .function_call_json("fc_1", "call_plan", "update_plan", plan_args)
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["done"]),
    ]))
    .await
    .unwrap();
    let run = exec_support::exec(home.path(), &mock, &["--json", "fix it"], "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let started = exec_support::of_type(&events, "item.started");
    let todo = started
        .iter()
        .find(|event| event["item"]["type"] == "todo_list")
        .unwrap_or_else(|| panic!("no todo list in {events:#?}"));
    assert_eq!(
        todo["item"]["items"],
        json!([{"text": "Read", "completed": true}, {"text": "Fix", "completed": false}])
    );
}
