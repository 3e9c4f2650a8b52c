//! `write_stdin`: the model writes to one of the thread's running commands (an
//! `exec_command` session on a PTY) and reads what it printed since; empty `chars` only
//! polls. Each call is a `terminalInteraction` of the command's one item, never an item of
//! its own; the item completes when the command exits (see `unified_exec`).

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

use super::super::event::EventMsg;
use super::super::ids::ItemId;
use super::handle::TurnHandle;
use super::output::ToolOutput;
use super::unified_exec::output::render;
use super::unified_exec::read_after_wait;

pub(crate) const TOOL_NAME: &str = "write_stdin";

/// A write waits this long for the command's answer unless the model says otherwise, within
/// the bounds below; a poll (nothing to write) waits longer, as there is nothing to answer.
const WRITE_YIELD_MS: (u64, u64, u64) = (250, 250, 30_000);
const POLL_YIELD_MS: (u64, u64, u64) = (5_000, 5_000, 300_000);

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct WriteStdinArgs {
    pub session_id: i64,
    #[serde(default)]
    pub chars: String,
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
}

/// The definition offered to the model: the reference's names, types and descriptions.
pub(crate) fn spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": "Writes characters to an existing unified exec session and returns recent output.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "chars": {"type": "string", "description": "Bytes to write to stdin. Defaults to empty, which polls without writing."},
                "max_output_tokens": {"type": "number", "description": "Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy."},
                "session_id": {"type": "number", "description": "Identifier of the running unified exec session."},
                "yield_time_ms": {"type": "number", "description": "Wait before yielding output. Non-empty writes default to 250 ms and cap at 30000 ms; empty polls wait 5000-300000 ms by default."}
            },
            "required": ["session_id"],
            "additionalProperties": false
        }
    })
}

/// Runs one call. `None` when the turn was interrupted while it waited (the command is killed
/// with the turn, as one still starting would be).
pub(crate) async fn run(
    turn: &TurnHandle,
    call_id: ItemId,
    args: WriteStdinArgs,
) -> Option<ToolOutput> {
    let clock = Instant::now();
    let answer = |text: String| ToolOutput {
        call_id: call_id.clone(),
        custom: false,
        text,
    };
    let Some(terminals) = super::unified_exec::terminals_of(turn) else {
        return Some(answer(
            "write_stdin failed: this thread keeps no sessions".to_string(),
        ));
    };
    let session = i32::try_from(args.session_id)
        .ok()
        .and_then(|id| terminals.get(id));
    let Some(session) = session else {
        return Some(answer(format!(
            "write_stdin failed: Unknown process id {}",
            args.session_id
        )));
    };
    if !args.chars.is_empty() {
        if let Err(reason) = session.write(args.chars.clone().into_bytes()).await {
            return Some(answer(format!("write_stdin failed: {reason}")));
        }
    }
    session.touch();
    let (default, min, max) = if args.chars.is_empty() {
        POLL_YIELD_MS
    } else {
        WRITE_YIELD_MS
    };
    let wait = args.yield_time_ms.unwrap_or(default).clamp(min, max);
    let deadline = clock + Duration::from_millis(wait);
    let collected = read_after_wait(turn, &terminals, &session, deadline).await?;
    turn.emit(EventMsg::TerminalInteraction {
        turn_id: turn.turn_id.clone(),
        item_id: session.item_id.clone(),
        process_id: session.id.to_string(),
        stdin: args.chars,
    })
    .await;
    Some(answer(render(
        &collected,
        session.id,
        clock.elapsed(),
        args.max_output_tokens,
    )))
}
