//! Runs a sub-agent tool call: the caller's thread is the parent, `core/agents/` does the work,
//! and the client sees one `collabAgentToolCall` item (started, then completed or failed) in
//! the calling turn. Every answer is JSON text with the reference's field names; a call that
//! cannot be done answers the reason in plain text.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::select_all;
use serde_json::{json, Value};

use super::super::super::agents::{control_of, AgentError, AgentStatus, SpawnRequest};
use super::super::super::ids::ItemId;
use super::super::super::items::{ToolItemStatus, TurnItem};
use super::super::super::thread::Thread;
use super::super::handle::TurnHandle;
use super::super::output::ToolOutput;
use super::call::{task_text, AgentCall, RoutedAgentCall, WaitArgs};

/// `wait_agent`'s timeout when none is given, and the bounds a given one is clamped to.
const DEFAULT_WAIT_MS: u64 = 30_000;
const MIN_WAIT_MS: u64 = 10_000;
const MAX_WAIT_MS: u64 = 3_600_000;

/// The item the client sees for one call.
struct CollabItem {
    id: ItemId,
    tool: &'static str,
    sender: String,
    receivers: Vec<String>,
    prompt: Option<String>,
    model: Option<String>,
    reasoning_effort: Option<String>,
    states: BTreeMap<String, (String, Option<String>)>,
}

impl CollabItem {
    fn item(&self, status: ToolItemStatus) -> TurnItem {
        TurnItem::CollabAgentToolCall {
            id: self.id.clone(),
            tool: self.tool.to_string(),
            status,
            sender_thread_id: self.sender.clone(),
            receiver_thread_ids: self.receivers.clone(),
            prompt: self.prompt.clone(),
            model: self.model.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            agents_states: self.states.clone(),
        }
    }

    fn note(&mut self, id: &str, status: &AgentStatus) {
        let (word, message) = status.client_state();
        self.states
            .insert(id.to_string(), (word.to_string(), message));
    }
}

/// Runs `call` for `turn`'s thread; `None` when the turn ended before an answer existed.
pub(crate) async fn run(turn: &TurnHandle, routed: RoutedAgentCall) -> Option<ToolOutput> {
    let RoutedAgentCall { call_id, call } = routed;
    let answer = |text: String| ToolOutput {
        call_id: call_id.clone(),
        custom: false,
        text,
    };
    let parent = turn
        .env
        .agents()
        .and_then(|thread| thread.downcast::<Thread>().ok());
    let Some((control, parent)) = parent.and_then(|parent| Some((control_of(&parent)?, parent)))
    else {
        return Some(answer(AgentError::Unavailable.to_string()));
    };
    let mut item = CollabItem {
        id: call_id.clone(),
        tool: "spawnAgent",
        sender: parent.id.to_string(),
        receivers: Vec::new(),
        prompt: None,
        model: None,
        reasoning_effort: None,
        states: BTreeMap::new(),
    };
    let result: Result<Value, AgentError> = match call {
        AgentCall::Spawn(args) => {
            let prompt = match task_text(args.message.as_ref(), args.items.as_ref()) {
                Ok(prompt) => prompt,
                Err(refusal) => return Some(answer(refusal)),
            };
            item.prompt = Some(prompt.clone());
            item.model = args.model.clone();
            item.reasoning_effort = args.reasoning_effort.clone();
            turn.item_started(item.item(ToolItemStatus::InProgress))
                .await;
            let request = SpawnRequest {
                prompt,
                fork_context: args.fork_context.unwrap_or(false),
                model: args.model,
                reasoning_effort: args.reasoning_effort,
                root_turn: turn.turn_id.clone(),
            };
            control.spawn(&parent, request).await.map(|(id, nickname)| {
                let id = id.to_string();
                item.receivers.push(id.clone());
                item.note(&id, &control.status(&id));
                json!({"agent_id": id, "nickname": nickname})
            })
        }
        AgentCall::Send(args) => {
            item.tool = "sendInput";
            item.receivers.push(args.target.clone());
            let message = match task_text(args.message.as_ref(), args.items.as_ref()) {
                Ok(message) => message,
                Err(refusal) => return Some(answer(refusal)),
            };
            item.prompt = Some(message.clone());
            turn.item_started(item.item(ToolItemStatus::InProgress))
                .await;
            let interrupt = args.interrupt.unwrap_or(false);
            let sent = control
                .send_input(
                    &args.target,
                    message,
                    interrupt,
                    &turn.turn_id,
                    &turn.cancel,
                )
                .await;
            item.note(&args.target, &control.status(&args.target));
            sent.map(|turn_id| json!({"submission_id": turn_id.to_string()}))
        }
        AgentCall::Wait(args) => {
            item.tool = "wait";
            item.receivers.clone_from(&args.targets);
            turn.item_started(item.item(ToolItemStatus::InProgress))
                .await;
            let Some((statuses, timed_out)) = wait(&control, &args, turn).await else {
                // The turn ended while waiting: the item ends with it, and no answer exists.
                turn.item_completed(item.item(ToolItemStatus::Failed)).await;
                return None;
            };
            let mut status = serde_json::Map::new();
            for (id, agent_status) in &statuses {
                item.note(id, agent_status);
                status.insert(id.clone(), agent_status.to_json());
            }
            Ok(json!({"status": status, "timed_out": timed_out}))
        }
        AgentCall::Close(args) => {
            item.tool = "closeAgent";
            item.receivers.push(args.target.clone());
            turn.item_started(item.item(ToolItemStatus::InProgress))
                .await;
            let closed = control.close(&args.target).await;
            item.note(&args.target, &control.status(&args.target));
            closed.map(|previous| json!({"previous_status": previous.to_json()}))
        }
        AgentCall::Resume(args) => {
            item.tool = "resumeAgent";
            item.receivers.push(args.id.clone());
            turn.item_started(item.item(ToolItemStatus::InProgress))
                .await;
            let resumed = control.resume(&parent, &args.id).await;
            item.note(&args.id, &control.status(&args.id));
            resumed.map(|status| json!({"status": status.to_json()}))
        }
    };
    let (status, text) = match result {
        Ok(value) => (ToolItemStatus::Completed, value.to_string()),
        Err(error) => (ToolItemStatus::Failed, error.to_string()),
    };
    turn.item_completed(item.item(status)).await;
    Some(answer(text))
}

/// Waits until one target stopped (or none can be found), the timeout passed, or the turn
/// ended (`None`). The statuses of the targets that stopped, and whether it timed out.
async fn wait(
    control: &super::super::super::agents::AgentControl,
    args: &WaitArgs,
    turn: &TurnHandle,
) -> Option<(Vec<(String, AgentStatus)>, bool)> {
    let timeout_ms = args
        .timeout_ms
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .map_or(DEFAULT_WAIT_MS, |ms| ms as u64)
        .clamp(MIN_WAIT_MS, MAX_WAIT_MS);
    let stopped = |control: &super::super::super::agents::AgentControl| {
        args.targets
            .iter()
            .map(|id| (id.clone(), control.status(id)))
            .filter(|(_, status)| status.is_final())
            .collect::<Vec<_>>()
    };
    let mut receivers: Vec<_> = args
        .targets
        .iter()
        .filter_map(|id| control.watch(id))
        .collect();
    let now = stopped(control);
    if !now.is_empty() || receivers.is_empty() {
        return Some((now, false));
    }
    let any_stops = select_all(
        receivers
            .iter_mut()
            .map(|receiver| Box::pin(receiver.wait_for(AgentStatus::is_final))),
    );
    tokio::select! {
        _ = any_stops => Some((stopped(control), false)),
        _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => Some((Vec::new(), true)),
        _ = turn.cancel.cancelled() => None,
    }
}
