//! `openturn exec --json` end to end against the loopback mock provider: every stdout line is an
//! event matching `docs/exec-events.schema.json`, in the reference's order (`thread.started`,
//! `turn.started`, items, then exactly one `turn.completed` / `turn.failed`), with the exit code
//! saying how the turn ended.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod exec_support;
mod support;
mod turn_support;

use exec_support::*;
use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn usage(input: i64, output: i64) -> Value {
    json!({"input_tokens": input, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
           "output_tokens": output, "reasoning_output_tokens": 0})
}

#[tokio::test]
async fn a_text_turn_prints_thread_turn_items_and_usage_in_the_reference_order() {
    let home = tempdir();
    let mock = provider(vec![ResponseBuilder::new("r1")
        .created()
        .reasoning("rs_1", &[&["Thinking ", "hard"]])
        .text_message("msg_1", &["Hello ", "world"])
        .completed(Usage::small(), None)
        .build()])
    .await;
    let run = exec(home.path(), &mock, &["--json", "say hi"], "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let thread_id = events[0]["thread_id"].as_str().unwrap_or_default();
    assert!(!thread_id.is_empty());
    assert_eq!(
        events,
        vec![
            json!({"type": "thread.started", "thread_id": thread_id}),
            json!({"type": "turn.started"}),
            json!({"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "Thinking hard"}}),
            json!({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Hello world"}}),
            json!({"type": "turn.completed", "usage": usage(10, 5)}),
        ]
    );
    // The prompt went upstream as the user's message.
    let body = &mock.wait_for_requests(1, TIMEOUT).await[0].body;
    assert!(body["input"].to_string().contains("say hi"), "{body}");
    // The thread is stored: a rollout exists whose name carries the id.
    assert!(rollout_lines(home.path()).len() > 1);
}

#[tokio::test]
async fn experimental_json_is_the_same_flag_and_the_prompt_comes_from_stdin() {
    let home = tempdir();
    let mock = provider(vec![message_reply("r1", "m", &["ok"])]).await;
    let run = exec(
        home.path(),
        &mock,
        &["--experimental-json", "--skip-git-repo-check"],
        "from stdin please",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    assert_eq!(events.len(), 4, "{events:#?}");
    let body = &mock.wait_for_requests(1, TIMEOUT).await[0].body;
    assert!(body["input"].to_string().contains("from stdin please"));
    // `-` also means stdin.
    let mock = provider(vec![message_reply("r1", "m", &["ok"])]).await;
    let run = exec(home.path(), &mock, &["--json", "-"], "dash prompt").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let body = &mock.wait_for_requests(1, TIMEOUT).await[0].body;
    assert!(body["input"].to_string().contains("dash prompt"));
}

#[tokio::test]
async fn an_empty_prompt_is_refused_with_a_clear_error() {
    let home = tempdir();
    let mock = provider(vec![]).await;
    let run = exec(home.path(), &mock, &["--json"], "  \n").await;
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("no prompt"), "{}", run.stderr);
}

#[tokio::test]
async fn a_tool_call_is_a_command_execution_started_then_completed_with_its_output() {
    let home = tempdir();
    let work = tempdir();
    let mock = provider(vec![
        ResponseBuilder::new("r1")
            .created()
            .text_message("msg_pre", &["Running."])
            .exec_call("fc_1", "call_1", json!({"cmd": "echo hi", "login": false}))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["Done."]),
    ])
    .await;
    let cwd = work.path().display().to_string();
    let run = exec(
        home.path(),
        &mock,
        &[
            "--json",
            "-c",
            "approval_policy=\"never\"",
            "--cd",
            &cwd,
            "run it",
        ],
        "",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        types,
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "item.started",
            "item.completed",
            "item.completed",
            "turn.completed"
        ]
    );
    let command = events[3]["item"]["command"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(command.ends_with("-c 'echo hi'"), "{command}");
    assert_eq!(
        events[3],
        json!({"type": "item.started", "item": {"id": "item_1", "type": "command_execution",
               "command": command, "aggregated_output": "", "exit_code": null, "status": "in_progress"}})
    );
    assert_eq!(
        events[4],
        json!({"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
               "command": command, "aggregated_output": "hi\n", "exit_code": 0, "status": "completed"}})
    );
    assert_eq!(
        events[5]["item"],
        json!({"id": "item_2", "type": "agent_message", "text": "Done."})
    );
    // Usage is cumulative: both sampling requests of the turn.
    assert_eq!(events[6]["usage"], usage(20, 10));
}

#[tokio::test]
async fn a_command_that_needs_approval_is_declined_visibly_instead_of_hanging() {
    let home = tempdir();
    let mock = provider(vec![
        ResponseBuilder::new("r1")
            .created()
            .exec_call(
                "fc_1",
                "call_1",
                // Escalated: only running outside the sandbox needs approval.
                json!({"cmd": "touch x && rm x", "login": false,
                       "sandbox_permissions": "require_escalated"}),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["Could not run it."]),
    ])
    .await;
    let run = exec(
        home.path(),
        &mock,
        &["--json", "-c", "approval_policy=\"on-request\"", "do it"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let commands: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .collect();
    assert_eq!(commands.len(), 1, "{events:#?}");
    assert_eq!(commands[0]["item"]["status"], "declined");
    assert!(run.stderr.contains("declined"), "{}", run.stderr);
    assert!(run.stderr.contains("touch x && rm x"), "{}", run.stderr);
}

#[tokio::test]
async fn a_failing_turn_prints_error_then_turn_failed_and_exits_1() {
    let home = tempdir();
    let mock = provider(vec![ResponseBuilder::new("r1")
        .failed("server_error", "the model broke")
        .build()])
    .await;
    let run = exec(home.path(), &mock, &["--json", "fail please"], "").await;
    assert_eq!(run.code, Some(1), "{run:#?}");
    let events = run.events();
    let last = events.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "turn.failed");
    let message = last["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the model broke"), "{message}");
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!(errors[0]["message"], message);
    assert!(of_type(&events, "turn.completed").is_empty());
}

#[tokio::test]
async fn output_schema_is_sent_as_the_requests_text_format() {
    let home = tempdir();
    let dir = tempdir();
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
                        "required": ["a"], "additionalProperties": false});
    let path = dir.path().join("schema.json");
    std::fs::write(&path, schema.to_string()).unwrap();
    let mock = provider(vec![message_reply("r1", "m", &["{\"a\":\"b\"}"])]).await;
    let path_arg = path.display().to_string();
    let run = exec(
        home.path(),
        &mock,
        &["--json", "--output-schema", &path_arg, "json"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    run.events();
    let body = &mock.wait_for_requests(1, TIMEOUT).await[0].body;
    assert_eq!(
        body["text"]["format"],
        json!({"type": "json_schema", "name": "codex_output_schema", "schema": schema, "strict": true})
    );
    // A schema file that is not JSON is named in the error, and nothing is sent.
    std::fs::write(&path, "{not json").unwrap();
    let run = exec(
        home.path(),
        &mock,
        &["--json", "--output-schema", &path_arg, "x"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains(&path_arg) && run.stderr.contains("not JSON"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn output_last_message_writes_the_final_answer_into_the_file() {
    let home = tempdir();
    let dir = tempdir();
    let out = dir.path().join("last.txt");
    let mock = provider(vec![ResponseBuilder::new("r1")
        .created()
        .text_message("m1", &["first"])
        .text_message("m2", &["the ", "answer"])
        .completed(Usage::small(), None)
        .build()])
    .await;
    let out_arg = out.display().to_string();
    let run = exec(home.path(), &mock, &["--json", "-o", &out_arg, "go"], "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    run.events();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap_or_default(),
        "the answer"
    );
}

#[tokio::test]
async fn resume_continues_the_stored_thread_with_its_history() {
    let home = tempdir();
    let mock = provider(vec![
        message_reply("r1", "m1", &["first answer"]),
        message_reply("r2", "m2", &["second answer"]),
    ])
    .await;
    let first = exec(home.path(), &mock, &["--json", "remember 42"], "").await;
    assert_eq!(first.code, Some(0), "{first:#?}");
    let thread_id = first.events()[0]["thread_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let second = exec(
        home.path(),
        &mock,
        &["--json", "resume", &thread_id],
        "what number?",
    )
    .await;
    assert_eq!(second.code, Some(0), "{second:#?}");
    let events = second.events();
    assert_eq!(
        events[0],
        json!({"type": "thread.started", "thread_id": thread_id})
    );
    let bodies: Vec<Value> = mock
        .wait_for_requests(2, TIMEOUT)
        .await
        .into_iter()
        .map(|r| r.body)
        .collect();
    let history = bodies[1]["input"].to_string();
    for earlier in ["remember 42", "first answer", "what number?"] {
        assert!(
            history.contains(earlier),
            "{earlier} missing from {history}"
        );
    }
    // Usage is the thread's: both turns.
    assert_eq!(
        events.last().cloned().unwrap_or_default()["usage"],
        usage(20, 10)
    );
    // An unknown thread is a clear error.
    let run = exec(
        home.path(),
        &mock,
        &["--json", "resume", "00000000-0000-0000-0000-000000000000"],
        "x",
    )
    .await;
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("thread/resume"), "{}", run.stderr);
}

#[tokio::test]
async fn ephemeral_threads_write_no_rollout() {
    let home = tempdir();
    let mock = provider(vec![message_reply("r1", "m", &["ok"])]).await;
    let run = exec(home.path(), &mock, &["--json", "--ephemeral", "hi"], "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    run.events();
    assert!(!home.path().join("sessions").exists());
}

#[tokio::test]
async fn stream_adds_item_updated_with_the_text_so_far() {
    let home = tempdir();
    let mock = provider(vec![ResponseBuilder::new("r1")
        .created()
        .reasoning("rs_1", &[&["Think", "ing"]])
        .text_message("msg_1", &["Hel", "lo"])
        .completed(Usage::small(), None)
        .build()])
    .await;
    let run = exec(home.path(), &mock, &["--json", "--stream", "hi"], "").await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    let brief: Vec<(String, String, String)> = events[2..events.len() - 1]
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["item"]["id"].as_str().unwrap_or_default().to_string(),
                e["item"]["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expect = |t: &str, id: &str, text: &str| (t.to_string(), id.to_string(), text.to_string());
    assert_eq!(
        brief,
        vec![
            expect("item.started", "item_0", ""),
            expect("item.updated", "item_0", "Think"),
            expect("item.updated", "item_0", "Thinking"),
            expect("item.completed", "item_0", "Thinking"),
            expect("item.started", "item_1", ""),
            expect("item.updated", "item_1", "Hel"),
            expect("item.updated", "item_1", "Hello"),
            expect("item.completed", "item_1", "Hello"),
        ]
    );
}

#[tokio::test]
async fn a_failing_command_and_a_two_part_reasoning_match_the_reference_shapes() {
    let home = tempdir();
    let mock = provider(vec![
        ResponseBuilder::new("r1")
            .created()
            .reasoning("rs_1", &[&["Part ", "one"], &["Part two"]])
            .exec_call(
                "fc_1",
                "call_1",
                json!({"cmd": "echo out; exit 3", "login": false}),
            )
            .completed(Usage::small(), None)
            .build(),
        message_reply("r2", "msg_f", &["Done."]),
    ])
    .await;
    let run = exec(
        home.path(),
        &mock,
        &["--json", "-c", "approval_policy=\"never\"", "go"],
        "",
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:#?}");
    let events = run.events();
    // As `codex exec --json` 0.169.0 prints them against the same transcript.
    assert_eq!(
        events[2]["item"],
        json!({"id": "item_0", "type": "reasoning", "text": "Part one\nPart two"})
    );
    let command = events[4]["item"]["command"].clone();
    assert_eq!(
        events[4]["item"],
        json!({"id": "item_1", "type": "command_execution", "command": command,
               "aggregated_output": "out\n", "exit_code": 3, "status": "failed"})
    );
}

#[test]
fn the_events_schema_refuses_malformed_events() {
    let ok = json!({"type": "turn.completed", "usage": usage(1, 2)});
    assert_eq!(schema_problem(&ok), Ok(()));
    for bad in [
        json!({"type": "turn.completed"}),
        json!({"type": "turn.finished", "usage": usage(1, 2)}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message"}}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "command_execution",
               "command": "ls", "aggregated_output": "", "exit_code": null, "status": "inProgress"}}),
        json!({"type": "thread.started", "thread_id": "t", "extra": 1}),
    ] {
        assert!(schema_problem(&bad).is_err(), "accepted {bad}");
    }
}
