//! Unit tests of the pending requests: ids, replies, timeouts, turn ends and closed connections.

use super::*;
use crate::core::approval::{ClientRequestKind, ClientToolCall, CommandApproval, CommandDecision};
use serde_json::json;
use tokio::sync::mpsc;

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_string()).unwrap()
}

fn approval() -> ClientRequestKind {
    ClientRequestKind::CommandApproval(CommandApproval {
        item_id: "call_1".into(),
        command: "/bin/sh -c 'x'".into(),
        raw_command: "x".into(),
        cwd: "/".into(),
        reason: None,
    })
}

fn tool_call() -> ClientRequestKind {
    ClientRequestKind::ToolCall(ClientToolCall {
        call_id: "call_2".into(),
        namespace: None,
        tool: "lookup".into(),
        arguments: json!({}),
    })
}

async fn lines(rx: &mut mpsc::Receiver<bytes::Bytes>) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    while let Ok(line) = rx.try_recv() {
        out.push(serde_json::from_slice(&line).unwrap());
    }
    out
}

#[tokio::test]
async fn ids_start_at_zero_and_replies_reach_their_waiter() {
    let (lines_tx, mut lines_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
    let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
    requests
        .send(
            "thread",
            request,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    let sent = lines(&mut lines_rx).await;
    assert_eq!(sent[0]["id"], 0);
    assert_eq!(sent[0]["method"], "item/commandExecution/requestApproval");
    assert!(
        requests
            .resolve(
                0,
                &RequestId::Integer(0),
                Ok(&raw(r#"{"decision":"accept"}"#))
            )
            .await
    );
    assert_eq!(
        reply_rx.await.ok(),
        Some(ClientReply::Decision(CommandDecision::Accept))
    );
    let resolved = lines(&mut lines_rx).await;
    assert_eq!(resolved[0]["method"], "serverRequest/resolved");
    assert_eq!(resolved[0]["params"]["requestId"], 0);
    assert!(
        !requests
            .resolve(0, &RequestId::Integer(0), Ok(&raw("{}")))
            .await
    );
}

#[tokio::test]
async fn every_subscriber_is_asked_and_the_first_answer_wins() {
    let (first_tx, mut first_rx) = mpsc::channel(16);
    let (second_tx, mut second_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
    let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
    let to = vec![
        (7, OutgoingSender::new(first_tx)),
        (8, OutgoingSender::new(second_tx)),
    ];
    requests.send("thread", request, to).await;
    let (asked_first, asked_second) = (lines(&mut first_rx).await, lines(&mut second_rx).await);
    let (first_id, second_id) = (asked_first[0]["id"].clone(), asked_second[0]["id"].clone());
    assert_ne!(first_id, second_id);
    // An id asked of the other connection is not this one's to answer.
    let not_ours = RequestId::Integer(first_id.as_i64().unwrap());
    assert!(
        !requests
            .resolve(8, &not_ours, Ok(&raw(r#"{"decision":"accept"}"#)))
            .await
    );
    let ours = RequestId::Integer(second_id.as_i64().unwrap());
    assert!(
        requests
            .resolve(8, &ours, Ok(&raw(r#"{"decision":"decline"}"#)))
            .await
    );
    assert_eq!(
        reply_rx.await.ok(),
        Some(ClientReply::Decision(CommandDecision::Decline))
    );
    assert_eq!(
        lines(&mut first_rx).await[0]["params"]["requestId"],
        first_id
    );
    assert_eq!(
        lines(&mut second_rx).await[0]["params"]["requestId"],
        second_id
    );
    // The late answer from the first connection is ignored.
    assert!(
        !requests
            .resolve(7, &not_ours, Ok(&raw(r#"{"decision":"accept"}"#)))
            .await
    );
    assert_eq!(requests.pending_count(), 0);
}

#[tokio::test]
async fn a_question_whose_every_recipient_left_is_cancelled() {
    let (first_tx, _first_rx) = mpsc::channel(16);
    let (second_tx, _second_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
    let (request, mut reply_rx) = ClientRequest::new("turn".into(), approval());
    let to = vec![
        (1, OutgoingSender::new(first_tx)),
        (2, OutgoingSender::new(second_tx)),
    ];
    requests.send("thread", request, to).await;
    requests.connection_closed(1);
    assert!(reply_rx.try_recv().is_err());
    requests.connection_closed(2);
    assert_eq!(reply_rx.await.ok(), Some(ClientReply::Cancelled));
    assert_eq!(requests.pending_count(), 0);
}

#[tokio::test]
async fn malformed_replies_decline_and_invalid_tool_answers_are_flagged() {
    let (lines_tx, _lines_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
    let (request, reply_rx) = ClientRequest::new("turn".into(), approval());
    requests
        .send(
            "thread",
            request,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    requests
        .resolve(0, &RequestId::Integer(0), Ok(&raw(r#"{"nope":1}"#)))
        .await;
    assert_eq!(
        reply_rx.await.ok(),
        Some(ClientReply::Decision(CommandDecision::Decline))
    );
    let (request, reply_rx) = ClientRequest::new("turn".into(), tool_call());
    requests
        .send(
            "thread",
            request,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    requests
        .resolve(0, &RequestId::Integer(1), Ok(&raw("{}")))
        .await;
    assert_eq!(reply_rx.await.ok(), Some(ClientReply::Invalid));
}

#[tokio::test]
async fn ending_a_turn_or_the_connection_answers_every_waiter() {
    let (lines_tx, mut lines_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
    let (first, first_rx) = ClientRequest::new("turn".into(), approval());
    let (second, second_rx) = ClientRequest::new("other".into(), tool_call());
    requests
        .send(
            "thread",
            first,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    requests
        .send(
            "thread",
            second,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    lines(&mut lines_rx).await;
    requests.turn_ended("thread", &TurnId::from("turn")).await;
    assert_eq!(first_rx.await.ok(), Some(ClientReply::Cancelled));
    assert_eq!(
        lines(&mut lines_rx).await[0]["method"],
        "serverRequest/resolved"
    );
    assert_eq!(requests.pending_count(), 1);
    requests.drain();
    assert_eq!(second_rx.await.ok(), Some(ClientReply::Cancelled));
    assert_eq!(requests.pending_count(), 0);
}

#[tokio::test]
async fn a_request_nobody_answers_times_out_and_is_cleaned_up() {
    let (lines_tx, _lines_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(Duration::from_millis(20));
    let (request, reply_rx) = ClientRequest::new("turn".into(), tool_call());
    requests
        .send(
            "thread",
            request,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    let reply = tokio::time::timeout(Duration::from_secs(20), reply_rx).await;
    assert!(matches!(reply, Ok(Ok(ClientReply::Failed(_)))));
    assert_eq!(requests.pending_count(), 0);
}

/// Tasks alive on this (current-thread) runtime once aborted ones have been reaped; the
/// loop is bounded because an abort completes at the task's next poll.
async fn alive_tasks_settled(expected: usize) -> usize {
    let metrics = tokio::runtime::Handle::current().metrics();
    for _ in 0..100 {
        if metrics.num_alive_tasks() == expected {
            break;
        }
        tokio::task::yield_now().await;
    }
    metrics.num_alive_tasks()
}

#[tokio::test]
async fn an_answered_or_ended_request_leaves_no_timeout_task_behind() {
    let (lines_tx, _lines_rx) = mpsc::channel(16);
    let requests = ServerRequests::new(SERVER_REQUEST_TIMEOUT);
    let before = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    let (answered, _answered_rx) = ClientRequest::new("turn".into(), tool_call());
    let (ended, _ended_rx) = ClientRequest::new("turn".into(), tool_call());
    let (drained, _drained_rx) = ClientRequest::new("other".into(), tool_call());
    requests
        .send(
            "thread",
            answered,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    requests
        .send(
            "thread",
            ended,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    requests
        .send(
            "thread",
            drained,
            vec![(0, OutgoingSender::new(lines_tx.clone()))],
        )
        .await;
    assert_eq!(alive_tasks_settled(before + 3).await, before + 3);
    requests
        .resolve(0, &RequestId::Integer(0), Ok(&raw("{}")))
        .await;
    assert_eq!(alive_tasks_settled(before + 2).await, before + 2);
    requests.turn_ended("thread", &TurnId::from("turn")).await;
    assert_eq!(alive_tasks_settled(before + 1).await, before + 1);
    requests.drain();
    assert_eq!(alive_tasks_settled(before).await, before);
}
