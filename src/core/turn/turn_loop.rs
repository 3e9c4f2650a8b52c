//! The turn loop: record the user's input, sample until nothing more is needed, end exactly once.
//!
//! A turn samples one response at a time ([`super::sampling`]). It follows up when the model
//! asked to continue (`end_turn == false`) or input was steered in meanwhile. A retryable stream
//! error re-samples from the current history (items already committed stay committed, once) up
//! to the provider's `stream_max_retries`. Whatever ends the turn, `run_turn` emits exactly one
//! `TurnEnded`: it is the only place that does, and it does so on every path out.

use super::super::ids::ItemId;
use crate::client::retry::backoff;

use crate::wire::ResponseItem;

use super::super::compact::prompt::TURN_ABORTED_NOTE;
use super::super::context;
use super::super::error::{TurnError, TurnErrorKind};
use super::super::event::{EventMsg, TurnOutcome};
use super::super::goal::model::TurnEndKind;
use super::super::items::TurnItem;
use super::super::record::{self, TurnEndRecord};
use super::super::skills;
use super::super::thread::TurnKind;
use super::compaction::{self, CompactionFailure, TurnCompactions};
use super::lifecycle::{TurnEnd, TurnTimes};
use super::sampling::{self, SamplingError};
use super::turn_context::TurnContext;
use super::turn_error::{client_turn_error, stream_turn_error, too_many_requests_error};
use super::usage;

pub(crate) async fn run_turn(mut turn: TurnContext, mut end: TurnEnd) {
    begin_turn(&mut turn, &mut end, TurnKind::Sampling).await;
    record_context(&turn).await;
    let outcome = sample_until_done(&turn).await;
    // Whatever the outcome, the turn takes no more input from here on.
    turn.thread.close_turn(&turn.turn_id);
    if outcome == TurnOutcome::Interrupted {
        // The model should know its last turn was cut short, not believe it finished.
        turn.record_history(ResponseItem::user_text(TURN_ABORTED_NOTE))
            .await;
    }
    let times = end.stop();
    let continue_goal = account_goal(&turn, &outcome, times).await;
    record_turn_end(&turn, &outcome, times).await;
    end.end(outcome).await;
    if continue_goal {
        // The slot is free now: the goal's next turn follows this one's `turn/completed`.
        if let Some(gate) = turn
            .thread
            .start_goal_turn()
            .and_then(|started| started.gate)
        {
            gate.open();
        }
    }
}

/// Counts the turn on the thread's active goal and announces the goal as it now stands,
/// before the turn's end; true when another turn should follow for it.
async fn account_goal(turn: &TurnContext, outcome: &TurnOutcome, times: TurnTimes) -> bool {
    let end = match outcome {
        TurnOutcome::Completed { .. } => TurnEndKind::Completed,
        TurnOutcome::Interrupted => TurnEndKind::Interrupted,
        TurnOutcome::Failed(_) => TurnEndKind::Failed,
    };
    let Some(verdict) = turn
        .thread
        .account_goal_turn_end(&turn.turn_id, end, times.duration_ms)
    else {
        return false;
    };
    turn.thread.persist_goal(Some(&verdict.goal)).await;
    if let Some(message) = verdict.stopped_because {
        turn.emit(EventMsg::Warning { message }).await;
    }
    turn.emit(EventMsg::GoalUpdated {
        turn_id: Some(turn.turn_id.clone()),
        goal: verdict.goal,
    })
    .await;
    verdict.continue_goal
}

/// A turn that only compacts the history (`thread/compact/start`): the compaction is its one
/// item, and it ends like any turn, exactly once.
pub(crate) async fn run_compaction_turn(mut turn: TurnContext, mut end: TurnEnd) {
    begin_turn(&mut turn, &mut end, TurnKind::Compaction).await;
    let outcome = match compaction::compact(&turn).await {
        Ok(()) => TurnOutcome::Completed {
            final_items: Vec::new(),
        },
        Err(CompactionFailure::Interrupted) => TurnOutcome::Interrupted,
        // Compacting is all this turn was asked to do: failing to is its failure.
        Err(CompactionFailure::Failed(error)) => TurnOutcome::Failed(TurnError {
            message: format!(
                "compaction failed (the history was left as it was): {}",
                error.message
            ),
            ..error
        }),
    };
    turn.thread.close_turn(&turn.turn_id);
    let times = end.stop();
    record_turn_end(&turn, &outcome, times).await;
    end.end(outcome).await;
}

/// What every turn does first: reads the skills its requests will name, starts its clock and
/// announces it (through `end`, the guard that ends the turn exactly once, created at launch),
/// and records its start.
pub(super) async fn begin_turn(turn: &mut TurnContext, end: &mut TurnEnd, kind: TurnKind) {
    // A turn's tools read the sandbox's mode: the startup check answers first, off this thread.
    super::super::sandboxing::isolation_decided().await;
    turn.skills_instructions = find_skills_instructions(turn).await;
    let started_at = end.begin().await;
    // Sticky overrides this turn brought (or a resume's) are recorded before the turn, so a
    // daemon restart resumes the thread with them. A compaction turn samples nothing with them:
    // they wait for the next sampling turn.
    if kind == TurnKind::Sampling {
        if let Some(settings) = turn.thread.take_settings_change() {
            turn.persist(record::settings_changed(&settings)).await;
        }
    }
    turn.persist(record::turn_started(&turn.turn_id, started_at))
        .await;
}

/// Scans the skill folders off the async threads: a slow disk must not stall other turns. None
/// when the thread's configuration leaves skills out (`skills.include_instructions = false`).
async fn find_skills_instructions(turn: &TurnContext) -> Option<String> {
    let settings = turn.thread.settings();
    if !settings.include_skills_instructions {
        return None;
    }
    let (roots, cwd, toggles) = (
        settings.user_skill_roots,
        settings.cwd,
        settings.skill_toggles,
    );
    tokio::task::spawn_blocking(move || {
        let mut listing = skills::list_skills(&roots, &cwd);
        listing
            .skills
            .retain(|skill| skills::is_enabled(skill, &toggles));
        skills::skills_instructions(&listing.skills)
    })
    .await
    .unwrap_or_default()
}

async fn sample_until_done(turn: &TurnContext) -> TurnOutcome {
    let settings = turn.thread.settings();
    let max_retries = settings.provider.stream_max_retries;
    let max_requests = settings.max_sampling_requests_per_turn;
    let mut retries = 0u32;
    // Every request counts, retries included: each one is a round trip the provider bills.
    let mut requests_sent = 0u32;
    let mut compactions = TurnCompactions::default();
    loop {
        if turn.cancel.is_cancelled() {
            return TurnOutcome::Interrupted;
        }
        if requests_sent >= max_requests {
            return TurnOutcome::Failed(too_many_requests_error(max_requests));
        }
        requests_sent += 1;
        deliver_pending_input(turn).await;
        // Before the turn's first request and between requests of the turn alike: when the
        // context the provider last reported reaches the limit, a compaction comes first.
        if let Err(outcome) = compaction::compact_if_needed(turn, &mut compactions).await {
            return outcome;
        }
        match sampling::sample_once(turn).await {
            Ok(result) => {
                retries = 0;
                compactions.response_completed();
                if !result.needs_follow_up && turn.thread.close_turn_unless_pending(&turn.turn_id) {
                    return TurnOutcome::Completed {
                        final_items: result.final_items,
                    };
                }
            }
            Err(SamplingError::Interrupted) => return TurnOutcome::Interrupted,
            Err(failure) if compaction::is_context_window_error(&failure) => {
                if let Err(outcome) =
                    compaction::compact_after_refusal(turn, &mut compactions).await
                {
                    // The refusal fails the turn: what the refused response reported is told,
                    // as for any failure that ends a turn.
                    if let (
                        TurnOutcome::Failed(_),
                        SamplingError::StreamAfterHeaders {
                            rate_limits, usage, ..
                        },
                    ) = (&outcome, failure)
                    {
                        usage::emit_failed_usage(turn, rate_limits, usage).await;
                    }
                    return outcome;
                }
            }
            Err(failure)
                if failure
                    .stream_error()
                    .is_some_and(|error| error.is_retryable() && retries < max_retries) =>
            {
                retries += 1;
                if !announce_retry(turn, failure, retries, max_retries).await {
                    return TurnOutcome::Interrupted;
                }
            }
            Err(SamplingError::Stream(error)) => {
                return TurnOutcome::Failed(stream_turn_error(&error, retries))
            }
            Err(SamplingError::StreamAfterHeaders {
                error,
                rate_limits,
                usage,
            }) => {
                usage::emit_failed_usage(turn, rate_limits, usage).await;
                return TurnOutcome::Failed(stream_turn_error(&error, retries));
            }
            Err(SamplingError::Client(error)) => {
                return TurnOutcome::Failed(client_turn_error(&error))
            }
        }
    }
}

/// Tells the client a failed response is being retried, then waits out the backoff; false when
/// the turn was interrupted meanwhile. A failed response that reported usage has it counted
/// first (those tokens were consumed); one that reported none adds nothing, so a retry that
/// succeeds is counted once.
async fn announce_retry(
    turn: &TurnContext,
    failure: SamplingError,
    retries: u32,
    max_retries: u32,
) -> bool {
    let error = match failure {
        SamplingError::StreamAfterHeaders {
            error,
            rate_limits,
            usage: Some(usage),
        } => {
            usage::emit_failed_usage(turn, rate_limits, Some(usage)).await;
            error
        }
        SamplingError::Stream(error) | SamplingError::StreamAfterHeaders { error, .. } => error,
        // The caller retries stream errors only; anything else has nothing to announce.
        SamplingError::Interrupted | SamplingError::Client(_) => return true,
    };
    let delay = backoff(retries, error.retry_delay());
    turn.emit(EventMsg::Error {
        turn_id: turn.turn_id.clone(),
        error: TurnError {
            message: format!("Reconnecting... {retries}/{max_retries}"),
            kind: TurnErrorKind::ResponseStreamDisconnected { status: None },
            details: Some(error.to_string()),
        },
        will_retry: true,
    })
    .await;
    tokio::select! {
        _ = turn.cancel.cancelled() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}

/// Tells the model where it works, before the turn's input: the first time, the `AGENTS.md`
/// files (the user's, then the project's) and the environment; afterwards the environment again
/// only when it changed (a new cwd, sandbox or policy, a new day), with the new cwd's
/// `AGENTS.md` when the cwd moved. What was told is read back from history, so a resumed thread
/// decides exactly as the original would have.
async fn record_context(turn: &TurnContext) {
    let settings = turn.thread.settings();
    let environment = context::environment_context(&settings);
    let (told_before, earlier_in_force) = {
        let state = turn.thread.state();
        (
            context::last_environment_context(&state.history).map(str::to_string),
            context::agents_docs_in_force(&state.history),
        )
    };
    let occasion = match &told_before {
        Some(told) if *told == environment => return,
        None => Some(context::DocsOccasion::FirstTurn),
        Some(told) if context::environment_cwd(told) != context::environment_cwd(&environment) => {
            Some(context::DocsOccasion::CwdChanged { earlier_in_force })
        }
        Some(_) => None,
    };
    let mut texts = Vec::new();
    if let Some(occasion) = occasion {
        let docs = context::agents_docs(
            &settings.cwd,
            settings.user_agents_file.as_deref(),
            settings.project_doc_max_bytes,
            occasion,
        );
        if let Some(docs) = docs {
            if let Some(message) = docs.cut_warning {
                turn.emit(EventMsg::Warning { message }).await;
            }
            texts.push(docs.text);
        }
    }
    texts.push(environment);
    turn.record_history(context::context_message(texts)).await;
}

/// Moves queued user input into history and announces it as user-message items.
async fn deliver_pending_input(turn: &TurnContext) {
    for pending in turn.take_pending_input() {
        if pending.is_hidden() {
            for message in pending.messages {
                turn.record_history(message).await;
            }
            continue;
        }
        let item = TurnItem::UserMessage {
            id: ItemId::new(),
            content: pending.input.clone(),
            client_id: pending.client_id,
        };
        turn.item_started(item.clone()).await;
        for message in pending.messages {
            turn.record_history(message).await;
        }
        turn.item_completed(item).await;
    }
}

/// Writes the turn's end to the rollout and syncs it: the turn boundary is durable.
pub(super) async fn record_turn_end(turn: &TurnContext, outcome: &TurnOutcome, times: TurnTimes) {
    let end = TurnEndRecord::new(
        turn.turn_id.as_str(),
        outcome,
        times.completed_at,
        times.duration_ms,
    );
    turn.persist(end.to_rollout()).await;
    if let Some(rollout) = &turn.thread.rollout {
        if let Err(error) = rollout.flush().await {
            tracing::warn!(%error, "rollout fsync at turn end failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    use crate::core::thread::Thread;
    use crate::core::tools::handle::TurnHandle;
    use crate::rollout::RolloutWriter;

    #[tokio::test]
    async fn a_failed_rollout_append_warns_and_live_history_keeps_the_item() {
        // Every write to /dev/full fails with ENOSPC.
        let full = std::path::Path::new("/dev/full");
        let entry = crate::rollout::IndexEntry {
            id: "t".into(),
            path: full.to_path_buf(),
            created_at: 0,
            updated_at: 0,
            updated_at_ms: 0,
            cwd: "/".into(),
            model: None,
            model_provider: "mock".into(),
            source: None,
            originator: None,
            cli_version: String::new(),
            forked_from_id: None,
            name: None,
            preview: String::new(),
            archived: false,
            metadata: None,
        };
        let rollout = RolloutWriter::open_append(full, None, entry).unwrap();
        let (events_tx, mut events_rx) = tokio::sync::mpsc::channel(8);
        let thread = Arc::new(Thread::for_tests(Some(rollout), events_tx));
        let turn = TurnContext {
            handle: TurnHandle::new(
                "t".into(),
                CancellationToken::new(),
                thread.events_tx.clone(),
                thread.rollout.clone(),
                thread.clone(),
                thread.questions.clone(),
            ),
            thread: thread.clone(),
            pending_input: Arc::default(),
            finished: CancellationToken::new(),
            provider_turn_state: Default::default(),
            output_schema: None,
            skills_instructions: None,
            service_tier: None,
            rerouted_announced: Arc::default(),
            settings_patch: Arc::default(),
        };
        turn.record_history(ResponseItem::user_text("kept")).await;
        assert_eq!(thread.history(), vec![ResponseItem::user_text("kept")]);
        match events_rx.try_recv() {
            Ok(EventMsg::Warning { message }) => assert!(message.contains("rollout"), "{message}"),
            other => panic!("expected a warning, got {other:?}"),
        }
    }

    /// Invariant: an item's times are stamped once. `ItemCompleted` carries the start its
    /// `ItemStarted` carried, and the item's rollout line stores exactly the two times the
    /// events carried, so the live item and the replayed one read the same.
    #[tokio::test]
    async fn item_events_and_the_item_line_carry_the_same_stamps() {
        use crate::core::record::{ItemTimes, TurnRecord};
        use crate::rollout::{RolloutItem, SessionMeta};

        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("rollout.jsonl");
        let rollout = RolloutWriter::create(&path, None).unwrap();
        rollout
            .append(RolloutItem::SessionMeta(SessionMeta {
                id: "th".into(),
                created_at: 0,
                cwd: "/".into(),
                model: "m".into(),
                model_provider: "mock".into(),
                originator: None,
                cli_version: "0".into(),
                forked_from_id: None,
                source: None,
                settings: None,
            }))
            .await
            .unwrap();
        let (events_tx, mut events_rx) = tokio::sync::mpsc::channel(8);
        let thread = Arc::new(Thread::for_tests(None, events_tx.clone()));
        let handle = TurnHandle::new(
            "t".into(),
            CancellationToken::new(),
            events_tx,
            Some(rollout.clone()),
            thread.clone(),
            thread.questions.clone(),
        );
        let item = TurnItem::AgentMessage {
            id: "msg".into(),
            text: "hi".into(),
            phase: None,
            memory_citation: None,
        };
        handle.item_started(item.clone()).await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        handle.item_completed(item.clone()).await;
        let Ok(EventMsg::ItemStarted { started_at_ms, .. }) = events_rx.try_recv() else {
            panic!("no ItemStarted");
        };
        let Ok(EventMsg::ItemCompleted {
            started_at_ms: completion_start,
            completed_at_ms,
            ..
        }) = events_rx.try_recv()
        else {
            panic!("no ItemCompleted");
        };
        assert_eq!(completion_start, started_at_ms);
        assert!(started_at_ms < completed_at_ms);

        rollout.flush().await.unwrap();
        let contents = crate::rollout::reader::read_rollout(&path).unwrap();
        let stored: Vec<_> = contents
            .items
            .iter()
            .filter_map(|line| match TurnRecord::read(line) {
                Some(TurnRecord::Item { item, times, .. }) => Some((item.decode(), times)),
                _ => None,
            })
            .collect();
        assert_eq!(
            stored,
            vec![(
                Some(item),
                Some(ItemTimes {
                    started_at_ms,
                    completed_at_ms,
                })
            )]
        );
    }
}
