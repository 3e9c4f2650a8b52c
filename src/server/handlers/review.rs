//! `review/start`: converts the target, resolves it in the thread's workspace (core decides
//! the prompt), and starts the review turn — on the thread itself, or, for a `detached`
//! delivery, on a new thread with the reviewed thread's settings, announced with
//! `thread/started` before the review turn begins.

use crate::core::review::{ReviewRequest, ReviewTarget};
use crate::core::{ThreadId, UserInput};
use crate::protocol::review::{
    ReviewDelivery, ReviewStartParams, ReviewStartResponse, ReviewTarget as WireTarget,
};
use crate::protocol::thread::ThreadStatus;

use super::super::context::ServerContext;
use super::super::convert;
use super::super::errors::HandlerError;
use super::super::projection::in_progress_turn;
use super::reply::{After, Reply};
use super::thread::start_response;

pub(crate) async fn review_start(
    context: &ServerContext,
    params: ReviewStartParams,
) -> Reply<ReviewStartResponse> {
    match start(context, params).await {
        Ok((response, after)) => Reply::then(response, after),
        Err(error) => Reply::plain(Err(error)),
    }
}

async fn start(
    context: &ServerContext,
    params: ReviewStartParams,
) -> Result<(ReviewStartResponse, Vec<After>), HandlerError> {
    let thread = context.threads.get(&ThreadId::parse(&params.thread_id)?)?;
    let target = target_in(params.target);
    let request = ReviewRequest::resolve(target, &thread.settings().cwd)
        .await
        .map_err(|error| HandlerError::InvalidParams(error.to_string()))?;
    let label = request.label.clone();
    let mut after = Vec::new();
    let reviewer = match params.delivery.unwrap_or(ReviewDelivery::Inline) {
        ReviewDelivery::Inline => thread,
        ReviewDelivery::Detached => {
            let spawn = context
                .threads
                .start_thread(thread.settings(), thread.ephemeral)
                .await?;
            let reviewer = spawn.thread.clone();
            let mut announced = start_response(&reviewer, ThreadStatus::Idle, None).thread;
            announced.turns = Vec::new();
            after.push(After::Announce(Box::new((announced, spawn))));
            reviewer
        }
    };
    let started = reviewer.start_review(request)?;
    after.extend(started.gate.map(After::OpenGate));
    let mut turn = in_progress_turn(started.turn_id.to_string(), None);
    // The response shows what is reviewed as the turn's input, as the reference's does.
    turn.items.push(convert::thread_item(
        &crate::core::TurnItem::UserMessage {
            id: crate::core::ItemId::from(started.turn_id.to_string()),
            content: vec![UserInput::Text { text: label }],
            client_id: None,
        },
        None,
        None,
    ));
    Ok((
        ReviewStartResponse {
            turn,
            review_thread_id: reviewer.id.to_string(),
        },
        after,
    ))
}

fn target_in(target: WireTarget) -> ReviewTarget {
    match target {
        WireTarget::UncommittedChanges => ReviewTarget::UncommittedChanges,
        WireTarget::BaseBranch { branch } => ReviewTarget::BaseBranch { branch },
        WireTarget::Commit { sha, title } => ReviewTarget::Commit { sha, title },
        WireTarget::Custom { instructions } => ReviewTarget::Custom { instructions },
    }
}

handler!(ReviewStart, |context, params| review_start(context, params)
    .await);
