//! Command approvals (docs/PROTOCOL.md §8) as the approval policy says: `untrusted` asks for
//! everything but known read-only commands; `on-request` asks only for escalated commands (the
//! sandbox holds the rest, tests/sandboxed_commands.rs); `never` never asks (and refuses
//! escalation, tests/sandbox_refusals.rs);
//! accept runs,
//! decline (or a malformed reply) tells the model, cancel ends the turn; the request is resolved
//! with `serverRequest/resolved`, after `turn/completed` when the turn was interrupted.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;
mod turn_support;

use serde_json::{json, Value};
use support::*;
use turn_support::*;

fn escalated(cmd: &str) -> Value {
    json!({"cmd": cmd, "login": false, "sandbox_permissions": "require_escalated",
        "justification": "Need to create a file"})
}

async fn approval_session(
    policy: &str,
    calls: impl FnOnce(ResponseBuilder) -> ResponseBuilder,
    workdir: &std::path::Path,
) -> Session {
    let first = ResponseBuilder::new("r1")
        .created()
        .with(calls)
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["after"]);
    let params = json!({"approvalPolicy": policy, "cwd": workdir.display().to_string()});
    session(Script::new([first, second]), &[], params).await
}

/// Messages up to and including the next approval request.
async fn until_approval(s: &mut Session) -> Vec<Value> {
    s.daemon
        .collect_until(|m| m["method"] == COMMAND_APPROVAL)
        .await
}

#[tokio::test]
async fn on_request_asks_for_an_escalated_command_and_accept_runs_it() {
    let workdir = tempfile::tempdir().unwrap();
    let calls = |b: ResponseBuilder| {
        b.exec_call("fc_1", "call_1", escalated("touch approved.txt && echo ok"))
    };
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    let response = s.start_turn("make a file", json!({})).await;
    let turn_id = response["result"]["turn"]["id"].clone();
    let before = until_approval(&mut s).await;
    let request = before.last().cloned().unwrap_or_default();
    assert_eq!(request["id"], 0);
    let params = &request["params"];
    assert_eq!(params["threadId"], s.thread_id.as_str());
    assert_eq!(params["turnId"], turn_id);
    assert_eq!(params["itemId"], "call_1");
    assert_eq!(params["reason"], "Need to create a file");
    assert_eq!(params["cwd"], workdir.path().display().to_string());
    assert!(params["command"]
        .as_str()
        .is_some_and(|c| c.ends_with("-c 'touch approved.txt && echo ok'")));
    assert!(params["startedAtMs"].is_i64());
    // waitingOnApproval, then the item, then the request.
    let waiting = before.iter().position(|m| {
        m["method"] == "thread/status/changed"
            && m["params"]["status"]["activeFlags"] == json!(["waitingOnApproval"])
    });
    let started = before.iter().position(|m| {
        m["method"] == "item/started" && m["params"]["item"]["type"] == "commandExecution"
    });
    assert!(waiting.is_some() && waiting < started, "{before:#?}");
    // Announced before it runs: no process yet.
    assert_eq!(
        before[started.unwrap_or(0)]["params"]["item"]["processId"],
        Value::Null
    );

    s.answer(&request["id"], json!({"decision": "accept"}))
        .await;
    let rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "completed");
    let resolved = rest
        .iter()
        .position(|m| m["method"] == "serverRequest/resolved");
    let cleared = rest.iter().position(|m| {
        m["method"] == "thread/status/changed" && m["params"]["status"]["activeFlags"] == json!([])
    });
    let done = rest.iter().position(|m| {
        m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
    });
    assert!(
        resolved.is_some() && resolved < cleared && cleared < done,
        "{rest:#?}"
    );
    assert_eq!(rest[resolved.unwrap_or(0)]["params"]["requestId"], 0);
    let item = items_of(&rest, "item/completed", "commandExecution");
    assert_eq!(item[0]["status"], "completed");
    assert_eq!(item[0]["aggregatedOutput"], "ok\n");
    assert!(workdir.path().join("approved.txt").exists());
}

#[tokio::test]
async fn decline_tells_the_model_and_the_turn_continues() {
    let workdir = tempfile::tempdir().unwrap();
    let calls = |b: ResponseBuilder| b.exec_call("fc_1", "call_1", escalated("touch declined.txt"));
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    s.start_turn("make a file", json!({})).await;
    let request = until_approval(&mut s).await.pop().unwrap_or_default();
    s.answer(&request["id"], json!({"decision": "decline"}))
        .await;
    let rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "completed");
    assert_eq!(
        items_of(&rest, "item/completed", "commandExecution")[0]["status"],
        "declined"
    );
    assert!(!workdir.path().join("declined.txt").exists());
    let bodies = s.bodies(2).await;
    let outputs = call_outputs(&bodies[1]);
    assert_eq!(outputs[0].0, "call_1");
    assert!(outputs[0].1.contains("declined"), "{outputs:?}");
}

#[tokio::test]
async fn a_malformed_approval_reply_counts_as_a_decline() {
    let workdir = tempfile::tempdir().unwrap();
    let calls = |b: ResponseBuilder| b.exec_call("fc_1", "call_1", escalated("touch nope.txt"));
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    s.start_turn("make a file", json!({})).await;
    let request = until_approval(&mut s).await.pop().unwrap_or_default();
    s.answer(&request["id"], json!({"verdict": "sure"})).await;
    let rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "completed");
    assert_eq!(
        items_of(&rest, "item/completed", "commandExecution")[0]["status"],
        "declined"
    );
    assert!(!workdir.path().join("nope.txt").exists());
}

#[tokio::test]
async fn cancel_declines_and_ends_the_turn_interrupted_and_the_next_turn_works() {
    let workdir = tempfile::tempdir().unwrap();
    let calls =
        |b: ResponseBuilder| b.exec_call("fc_1", "call_1", escalated("touch cancelled.txt"));
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    s.start_turn("make a file", json!({})).await;
    let request = until_approval(&mut s).await.pop().unwrap_or_default();
    s.answer(&request["id"], json!({"decision": "cancel"}))
        .await;
    let rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "interrupted");
    assert_eq!(
        items_of(&rest, "item/completed", "commandExecution")[0]["status"],
        "declined"
    );
    assert!(!workdir.path().join("cancelled.txt").exists());
    // The call was answered in history, so the next turn's request is well formed.
    let next = s.run_turn("next").await;
    single_turn_end(&next, "completed");
    let bodies = s.bodies(2).await;
    assert_eq!(call_outputs(&bodies[1]).len(), 1);
    assert_eq!(call_outputs(&bodies[1])[0].0, "call_1");
}

/// Runs `ls` and `touch x.txt` (neither escalated) under `params`, declining any approval; the
/// messages of the turn.
async fn run_ls_and_touch(params: Value) -> Vec<Value> {
    let calls = |b: ResponseBuilder| {
        b.exec_call("fc_1", "call_ls", json!({"cmd": "ls", "login": false}))
            .exec_call(
                "fc_2",
                "call_touch",
                json!({"cmd": "touch x.txt", "login": false}),
            )
    };
    let first = ResponseBuilder::new("r1")
        .created()
        .with(calls)
        .completed(Usage::small(), None)
        .build();
    let second = message_reply("r2", "msg_f", &["after"]);
    let mut s = session(Script::new([first, second]), &[], params).await;
    s.start_turn("look", json!({})).await;
    let all = s.answer_approvals(3, |_| "decline").await;
    single_turn_end(&all, "completed");
    all
}

fn status_of(all: &[Value], id: &str) -> Option<Value> {
    items_of(all, "item/completed", "commandExecution")
        .iter()
        .find(|i| i["id"] == id)
        .map(|i| i["status"].clone())
}

#[tokio::test]
async fn untrusted_asks_for_everything_but_known_read_only_commands() {
    let workdir = tempfile::tempdir().unwrap();
    let params =
        json!({"approvalPolicy": "untrusted", "cwd": workdir.path().display().to_string()});
    let all = run_ls_and_touch(params).await;
    let asked = params_of(&all, COMMAND_APPROVAL);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["itemId"], "call_touch");
    assert_eq!(status_of(&all, "call_ls"), Some(json!("completed")));
    assert_eq!(status_of(&all, "call_touch"), Some(json!("declined")));
}

#[tokio::test]
async fn on_request_runs_unescalated_commands_in_the_sandbox_without_asking() {
    // As the reference does: the sandbox, not a prompt, holds an unescalated command. Under
    // read-only the write is refused by the sandbox; under workspace-write it lands in the cwd.
    for (sandbox, writes) in [("read-only", false), ("workspace-write", true)] {
        let workdir = tempfile::tempdir().unwrap();
        let params = json!({"approvalPolicy": "on-request", "sandbox": sandbox,
            "cwd": workdir.path().display().to_string()});
        let all = run_ls_and_touch(params).await;
        assert!(params_of(&all, COMMAND_APPROVAL).is_empty(), "{sandbox}");
        assert_eq!(status_of(&all, "call_ls"), Some(json!("completed")));
        let touched = if writes { "completed" } else { "failed" };
        assert_eq!(
            status_of(&all, "call_touch"),
            Some(json!(touched)),
            "{sandbox}"
        );
        assert_eq!(workdir.path().join("x.txt").exists(), writes, "{sandbox}");
    }
}

#[tokio::test]
async fn on_request_with_danger_full_access_and_never_run_unescalated_commands_without_asking() {
    for (policy, sandbox) in [
        ("on-request", "danger-full-access"),
        ("never", "danger-full-access"),
    ] {
        let workdir = tempfile::tempdir().unwrap();
        let params = json!({"approvalPolicy": policy, "sandbox": sandbox,
            "cwd": workdir.path().display().to_string()});
        let all = run_ls_and_touch(params).await;
        assert!(params_of(&all, COMMAND_APPROVAL).is_empty(), "{policy}");
        assert_eq!(status_of(&all, "call_touch"), Some(json!("completed")));
        assert!(workdir.path().join("x.txt").exists(), "{policy}");
    }
}

#[tokio::test]
async fn an_approval_pending_at_interrupt_is_resolved_after_turn_completed() {
    let workdir = tempfile::tempdir().unwrap();
    let calls = |b: ResponseBuilder| b.exec_call("fc_1", "call_1", escalated("touch late.txt"));
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    let response = s.start_turn("make a file", json!({})).await;
    let turn_id = response["result"]["turn"]["id"].clone();
    let request = until_approval(&mut s).await.pop().unwrap_or_default();
    let thread_id = s.thread_id.clone();
    let interrupted = s
        .daemon
        .request(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await;
    assert_eq!(interrupted["result"], json!({}));
    let mut rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "interrupted");
    assert!(items_of(&rest, "item/completed", "commandExecution").is_empty());
    rest.extend(
        s.daemon
            .collect_until(|m| m["method"] == "serverRequest/resolved")
            .await,
    );
    let resolved = params_of(&rest, "serverRequest/resolved");
    assert_eq!(resolved[0]["requestId"], request["id"]);
    assert!(!workdir.path().join("late.txt").exists());
}

#[tokio::test]
async fn accept_for_session_is_not_asked_again_for_the_same_command() {
    let workdir = tempfile::tempdir().unwrap();
    let script = Script::new([
        ResponseBuilder::new("r1")
            .created()
            .exec_call("fc_1", "call_1", escalated("echo again"))
            .completed(Usage::small(), None)
            .build(),
        ResponseBuilder::new("r2")
            .created()
            .exec_call("fc_2", "call_2", escalated("echo again"))
            .completed(Usage::small(), None)
            .build(),
        message_reply("r3", "msg_f", &["done"]),
    ]);
    let params =
        json!({"approvalPolicy": "on-request", "cwd": workdir.path().display().to_string()});
    let mut s = session(script, &[], params).await;
    s.start_turn("twice", json!({})).await;
    let mut all = until_approval(&mut s).await;
    let request = all.last().cloned().unwrap_or_default();
    s.answer(&request["id"], json!({"decision": "acceptForSession"}))
        .await;
    all.extend(s.daemon.until_turn_completed().await);
    single_turn_end(&all, "completed");
    assert_eq!(params_of(&all, COMMAND_APPROVAL).len(), 1);
    let completed = items_of(&all, "item/completed", "commandExecution");
    assert_eq!(completed.len(), 2);
    assert!(completed.iter().all(|item| item["status"] == "completed"));
}

#[tokio::test]
async fn a_client_that_disconnects_during_an_approval_ends_the_turn_and_the_daemon_exits() {
    let workdir = tempfile::tempdir().unwrap();
    let calls = |b: ResponseBuilder| b.exec_call("fc_1", "call_1", escalated("touch gone.txt"));
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    s.start_turn("make a file", json!({})).await;
    until_approval(&mut s).await;
    s.daemon.close_stdin();
    let rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "interrupted");
    assert_eq!(s.daemon.wait_exit().await, Some(0));
    assert!(!workdir.path().join("gone.txt").exists());
}

/// The `thread/status/changed` flags in `messages`, in order.
fn status_flags(messages: &[Value]) -> Vec<Value> {
    params_of(messages, "thread/status/changed")
        .iter()
        .map(|p| p["status"]["activeFlags"].clone())
        .collect()
}

#[tokio::test]
async fn waiting_on_approval_stays_set_until_the_last_of_parallel_approvals_is_answered() {
    let workdir = tempfile::tempdir().unwrap();
    // Two escalated commands in one response: their tools run in parallel, both ask.
    let calls = |b: ResponseBuilder| {
        b.exec_call("fc_1", "call_1", escalated("echo one"))
            .exec_call("fc_2", "call_2", escalated("echo two"))
    };
    let mut s = approval_session("on-request", calls, workdir.path()).await;
    s.start_turn("two commands", json!({})).await;
    let mut asked = until_approval(&mut s).await;
    asked.extend(until_approval(&mut s).await);
    let requests: Vec<Value> = asked
        .iter()
        .filter(|m| m["method"] == COMMAND_APPROVAL)
        .cloned()
        .collect();
    assert_eq!(requests.len(), 2, "{asked:#?}");
    // The flag went up once, with the first question.
    let waiting = json!(["waitingOnApproval"]);
    assert_eq!(status_flags(&asked), vec![json!([]), waiting.clone()]);

    // One answered: its command runs and completes while the other still waits.
    let (first, second) = (&requests[0], &requests[1]);
    let first_item = first["params"]["itemId"].clone();
    s.answer(&first["id"], json!({"decision": "accept"})).await;
    let after_first = s
        .daemon
        .collect_until(|m| {
            m["method"] == "item/completed"
                && m["params"]["item"]["type"] == "commandExecution"
                && m["params"]["item"]["id"] == first_item
        })
        .await;
    assert!(
        status_flags(&after_first).is_empty(),
        "the status changed while an approval was still open: {after_first:#?}"
    );

    // The last one answered: the flag comes down, before its command completes.
    let second_item = second["params"]["itemId"].clone();
    s.answer(&second["id"], json!({"decision": "accept"})).await;
    let rest = s.daemon.until_turn_completed().await;
    single_turn_end(&rest, "completed");
    let cleared = rest.iter().position(|m| {
        m["method"] == "thread/status/changed" && m["params"]["status"]["activeFlags"] == json!([])
    });
    let second_done = rest
        .iter()
        .position(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == second_item);
    assert!(
        cleared.is_some() && cleared < second_done,
        "the flag did not come down with the last answer: {rest:#?}"
    );
    assert_eq!(
        status_flags(&rest),
        vec![json!([]), Value::Null],
        "cleared once, then idle at the turn's end: {rest:#?}"
    );
}
