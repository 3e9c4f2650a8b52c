//! The `multi_agent_v1` namespace: `spawn_agent`, `send_input`, `wait_agent`, `close_agent` and
//! `resume_agent`, with the reference's parameter names. This file describes the tools and
//! checks a call's arguments; `call.rs` holds the parsed calls, and `run.rs` runs a call against
//! `core/agents/` and shows it to the client as a `collabAgentToolCall` item.

mod call;
mod run;

use serde_json::{json, Value};

use super::super::agents::NAMESPACE;
use super::super::settings::ThreadSettings;

use call::AgentCall;
pub(crate) use call::RoutedAgentCall;
pub(crate) use run::run;

pub(crate) const TOOL_NAME: &str = NAMESPACE;

const SPAWN: &str = "spawn_agent";
const SEND: &str = "send_input";
const WAIT: &str = "wait_agent";
const CLOSE: &str = "close_agent";
const RESUME: &str = "resume_agent";

/// The call a function call names, or `None` when it is not one of these tools; `Err` holds
/// the refusal the model reads.
pub(crate) fn parse(
    name: &str,
    namespace: Option<&str>,
    arguments: &str,
    settings: &ThreadSettings,
) -> Option<Result<AgentCall, String>> {
    if namespace.is_some_and(|ns| ns != NAMESPACE) {
        return None;
    }
    if ![SPAWN, SEND, WAIT, CLOSE, RESUME].contains(&name) {
        return None;
    }
    if settings.model_catalog.tool_config().switches.get(NAMESPACE) == Some(&false) {
        return Some(Err(format!("unsupported call: {name}")));
    }
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let bad = |error: serde_json::Error| format!("failed to parse function arguments: {error}");
    Some(match name {
        SPAWN => serde_json::from_str(arguments)
            .map(AgentCall::Spawn)
            .map_err(bad),
        SEND => serde_json::from_str(arguments)
            .map(AgentCall::Send)
            .map_err(bad),
        WAIT => serde_json::from_str(arguments)
            .map(AgentCall::Wait)
            .map_err(bad),
        CLOSE => serde_json::from_str(arguments)
            .map(AgentCall::Close)
            .map_err(bad),
        _ => serde_json::from_str(arguments)
            .map(AgentCall::Resume)
            .map_err(bad),
    })
}

fn input_items() -> Value {
    let text = |what: &str| json!({"type": "string", "description": what});
    json!({
        "type": "array",
        "description": "Structured input instead of `message`: text, images, files, skills or mentions.",
        "items": {
            "type": "object",
            "properties": {
                "type": text("`text`, `image`, `local_image`, `skill` or `mention`."),
                "text": text("The text of a `text` item."),
                "image_url": text("The URL of an `image` item."),
                "audio_url": text("The URL of an audio item."),
                "path": text("The file of a `local_image`, `skill` or `mention` item."),
                "name": text("The name of a `skill` or `mention` item."),
            },
            "additionalProperties": false
        }
    })
}

fn function(name: &str, description: &str, parameters: Value) -> Value {
    json!({"type": "function", "name": name, "description": description, "strict": false,
        "parameters": parameters})
}

/// The namespace as offered to the model.
pub(crate) fn spec() -> Value {
    let string = |what: &str| json!({"type": "string", "description": what});
    json!({
        "type": "namespace",
        "name": NAMESPACE,
        "description": "Delegate work to sub-agents: each runs in its own thread with your \
            settings and answers with its last message.",
        "tools": [
            function(CLOSE, "Stop a sub-agent: interrupts its turn and unloads it. Answers its status before.", json!({
                "type": "object",
                "properties": {"target": string("The agent_id spawn_agent returned.")},
                "required": ["target"],
                "additionalProperties": false
            })),
            function(RESUME, "Load a closed sub-agent again from disk, with its history, so it can take input.", json!({
                "type": "object",
                "properties": {"id": string("The agent_id of the closed agent.")},
                "required": ["id"],
                "additionalProperties": false
            })),
            function(SEND, "Give a sub-agent more input: an idle agent starts a new turn with it; a busy one gets it in its running turn, or with interrupt: true stops that turn and starts a new one.", json!({
                "type": "object",
                "properties": {
                    "target": string("The agent_id spawn_agent returned."),
                    "message": string("The text to send."),
                    "items": input_items(),
                    "interrupt": {"type": "boolean", "description": "Stop the agent's running turn first."}
                },
                "required": ["target"],
                "additionalProperties": false
            })),
            function(SPAWN, "Start a sub-agent on a self-contained task. It works in parallel and \
                sees only the task (unless fork_context); returns its agent_id and nickname at \
                once. Use wait_agent to get its answer.", json!({
                "type": "object",
                "properties": {
                    "message": string("The task, stated completely."),
                    "items": input_items(),
                    "fork_context": {"type": "boolean", "description": "Give the agent a copy of this conversation's history."},
                    "model": string("A model for the agent instead of yours."),
                    "reasoning_effort": string("A reasoning effort for the agent instead of yours.")
                },
                "additionalProperties": false
            })),
            function(WAIT, "Wait until one of the given agents finishes, or the timeout passes; answers each finished agent's status and last message.", json!({
                "type": "object",
                "properties": {
                    "targets": {"type": "array", "items": {"type": "string"}, "description": "The agent_ids to wait on."},
                    "timeout_ms": {"type": "number", "description": "How long to wait, in milliseconds (10000 to 3600000; 30000 when left out)."}
                },
                "required": ["targets"],
                "additionalProperties": false
            })),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: the five functions route in their namespace or bare, other namespaces are not
    /// theirs, and a thread without the tool (a child) has its calls refused.
    #[test]
    fn calls_route_in_the_namespace_and_are_refused_where_the_tool_is_off() {
        let settings = ThreadSettings::for_tests();
        let spawn = r#"{"message": "task"}"#;
        assert!(matches!(
            parse(SPAWN, Some(NAMESPACE), spawn, &settings),
            Some(Ok(AgentCall::Spawn(_)))
        ));
        assert!(matches!(
            parse(WAIT, None, r#"{"targets": ["a"]}"#, &settings),
            Some(Ok(AgentCall::Wait(_)))
        ));
        assert!(parse(SPAWN, Some("mcp__x"), spawn, &settings).is_none());
        assert!(parse("exec_command", Some(NAMESPACE), "{}", &settings).is_none());
        assert!(matches!(
            parse(CLOSE, Some(NAMESPACE), "{}", &settings),
            Some(Err(refusal)) if refusal.contains("target")
        ));
        let child = super::super::super::agents::child_settings(settings, 1);
        assert_eq!(
            parse(SPAWN, Some(NAMESPACE), spawn, &child).map(|r| r.err()),
            Some(Some("unsupported call: spawn_agent".to_string()))
        );
        assert!(call::task_text(None, None).is_err());
    }
}
