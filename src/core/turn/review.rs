//! The review turn (`review/start`). The review runs in a fresh context: a reviewer thread of
//! its own, held only in memory, with the review guidelines as its developer message, the
//! environment, and the review prompt — none of the reviewed thread's history. It may run
//! read-only commands (to look at the diff) and never asks the client for approval. What it
//! does shows in the reviewed thread's turn (its command items, usage, warnings); its raw JSON
//! answer does not: the turn ends with an `exitedReviewMode` item and an agent message holding
//! the rendered report, which is also what the reviewed thread's history keeps.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::wire::item::ContentItem;
use crate::wire::ResponseItem;

use super::super::error::{TurnError, TurnErrorKind};
use super::super::event::{EventMsg, TurnOutcome};
use super::super::ids::{ItemId, ThreadId};
use super::super::input::PreparedInput;
use super::super::items::{TurnItem, UserInput};
use super::super::review::{history_note, render, ReviewRequest, REVIEW_GUIDELINES};
use super::super::settings::{ApprovalPolicy, SandboxMode, ThreadSettings};
use super::super::thread::{Thread, TurnKind};
use super::lifecycle::TurnEnd;
use super::turn_context::TurnContext;
use super::turn_loop::{begin_turn, record_turn_end};

/// Events of the reviewer thread waiting to be relayed.
const REVIEWER_EVENTS: usize = 64;

pub(crate) async fn run_review_turn(
    mut turn: TurnContext,
    mut end: TurnEnd,
    review: Option<ReviewRequest>,
) {
    begin_turn(&mut turn, &mut end, TurnKind::Review).await;
    let outcome = match review {
        Some(review) => run_review(&turn, review).await,
        None => TurnOutcome::Failed(TurnError {
            message: "a review turn was started without a review request".to_string(),
            kind: TurnErrorKind::Other,
            details: None,
        }),
    };
    turn.thread.close_turn(&turn.turn_id);
    let times = end.stop();
    record_turn_end(&turn, &outcome, times).await;
    end.end(outcome).await;
}

async fn run_review(turn: &TurnContext, review: ReviewRequest) -> TurnOutcome {
    let entered = TurnItem::EnteredReviewMode {
        id: ItemId::new(),
        review: review.label.clone(),
    };
    turn.item_started(entered.clone()).await;
    turn.item_completed(entered).await;
    let prompt = TurnItem::UserMessage {
        id: ItemId::new(),
        content: vec![UserInput::Text {
            text: review.prompt.clone(),
        }],
        client_id: None,
    };
    turn.item_started(prompt.clone()).await;
    turn.item_completed(prompt).await;

    let (events_tx, events_rx) = mpsc::channel(REVIEWER_EVENTS);
    let reviewer = Arc::new(Thread::new(
        ThreadId::new(),
        super::super::clock::now_unix_seconds(),
        true,
        Some(turn.thread.id.to_string()),
        reviewer_settings(turn.thread.settings()),
        Vec::new(),
        None,
        events_tx,
        turn.thread.client.clone(),
        // Interrupting the review turn interrupts the reviewer's turn.
        turn.cancel.child_token(),
    ));
    let started = reviewer.start_turn(PreparedInput::text(review.prompt), None, None);
    let outcome = match started {
        Ok(started) => {
            if let Some(gate) = started.gate {
                gate.open();
            }
            relay(turn, events_rx).await
        }
        Err(error) => ReviewerEnd::Outcome(TurnOutcome::Failed(TurnError {
            message: format!("the review could not start: {error}"),
            kind: TurnErrorKind::Other,
            details: None,
        })),
    };
    reviewer.shutdown().await;
    match outcome {
        ReviewerEnd::Answered(answer) => finish(turn, &answer).await,
        ReviewerEnd::Outcome(outcome) => outcome,
    }
}

/// How the reviewer's turn ended.
enum ReviewerEnd {
    /// It completed; its last agent message.
    Answered(String),
    /// It was interrupted or failed.
    Outcome(TurnOutcome),
}

/// Passes the reviewer's progress on as the review turn's own, until its turn ends. Its agent
/// messages are kept back (the raw answer is not for the client); the last is the answer.
async fn relay(turn: &TurnContext, mut events: mpsc::Receiver<EventMsg>) -> ReviewerEnd {
    let mut answer = String::new();
    while let Some(event) = events.recv().await {
        match event {
            EventMsg::TurnEnded { outcome, .. } => {
                return match outcome {
                    TurnOutcome::Completed { .. } => ReviewerEnd::Answered(answer),
                    other => ReviewerEnd::Outcome(other),
                }
            }
            EventMsg::ItemCompleted {
                item: TurnItem::AgentMessage { text, .. },
                ..
            } => answer = text,
            EventMsg::ItemStarted {
                item: TurnItem::AgentMessage { .. } | TurnItem::UserMessage { .. },
                ..
            }
            | EventMsg::ItemCompleted {
                item: TurnItem::UserMessage { .. },
                ..
            }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::TurnStarted { .. } => {}
            EventMsg::ItemStarted { item, .. } => turn.item_started(item).await,
            EventMsg::ItemCompleted { item, .. } => turn.item_completed(item).await,
            EventMsg::CommandOutputDelta { item_id, delta, .. } => {
                turn.emit(EventMsg::CommandOutputDelta {
                    turn_id: turn.turn_id.clone(),
                    item_id,
                    delta,
                })
                .await
            }
            EventMsg::TokenCount {
                total,
                last,
                model_context_window,
                ..
            } => {
                turn.emit(EventMsg::TokenCount {
                    turn_id: turn.turn_id.clone(),
                    total,
                    last,
                    model_context_window,
                })
                .await
            }
            EventMsg::RateLimits { snapshot, .. } => {
                turn.emit(EventMsg::RateLimits {
                    turn_id: turn.turn_id.clone(),
                    snapshot,
                })
                .await
            }
            EventMsg::Error {
                error, will_retry, ..
            } => {
                turn.emit(EventMsg::Error {
                    turn_id: turn.turn_id.clone(),
                    error,
                    will_retry,
                })
                .await
            }
            event @ EventMsg::Warning { .. } => turn.emit(event).await,
            // Reasoning, plans and the rest are the reviewer's own business.
            _ => {}
        }
    }
    // The reviewer's channel closed without its turn's end: it was torn down (shutdown).
    ReviewerEnd::Outcome(TurnOutcome::Interrupted)
}

/// Shows the report and keeps it in the reviewed thread's history.
async fn finish(turn: &TurnContext, answer: &str) -> TurnOutcome {
    let report = render(answer);
    let exited = TurnItem::ExitedReviewMode {
        id: ItemId::new(),
        review: report.clone(),
    };
    turn.item_started(exited.clone()).await;
    turn.item_completed(exited).await;
    let message = TurnItem::AgentMessage {
        id: ItemId::new(),
        text: report.clone(),
        phase: None,
        memory_citation: None,
    };
    turn.item_started(message.clone()).await;
    turn.item_completed(message.clone()).await;
    turn.record_history(ResponseItem::user_text(history_note(&report)))
        .await;
    turn.record_history(ResponseItem::Message {
        id: None,
        role: "assistant".to_string(),
        content: vec![ContentItem::OutputText {
            text: report.clone(),
        }],
        phase: None,
    })
    .await;
    TurnOutcome::Completed {
        final_items: vec![message],
    }
}

/// The reviewer's settings: the reviewed thread's model, provider and workspace, the review
/// guidelines as its developer message, and no more than reading: a read-only sandbox, nothing
/// that would ask the client, no client or MCP tools, no plan mode.
fn reviewer_settings(mut settings: ThreadSettings) -> ThreadSettings {
    settings.developer_instructions = Some(REVIEW_GUIDELINES.to_string());
    settings.approval_policy = ApprovalPolicy::Never;
    settings.sandbox = SandboxMode::ReadOnly;
    settings.sandbox_writable_roots = Vec::new();
    settings.sandbox_network_access = false;
    settings.plan_mode = false;
    settings.dynamic_tools = Vec::new();
    settings.mcp_servers = Vec::new();
    settings
}
