//! The answers of the built-in `demo` provider: scripted, offline, chosen from what the user
//! typed, so every command and client can be tried without a key.
//!
//! Each request is answered from its own body, nothing is remembered between requests: the
//! user's last message picks a plan (a shell command that needs approval, a file edit, both, or
//! a greeting), and the tool calls and outputs already in the request's `input` say how far the
//! plan got. The first response of a turn opens with a reasoning summary; the last one is a
//! message saying what happened to each step. A client that declines a step hears so in that
//! message, as it would from a real model.
//!
//! Like the rest of `mock_provider`, this knows the Responses wire format and nothing of the
//! daemon: the tools it calls are found by name in the request's `tools`.

use serde_json::{json, Value};

use super::builders::{split_text, ResponseBuilder, Usage};
use super::recorded::RecordedRequest;
use super::script::{Reply, Responder};

/// The command the demo asks to run: harmless, and it prints where the thread works.
pub const DEMO_COMMAND: &str = "echo hello from the openturn demo && pwd";
/// The file the demo's patch adds, relative to the thread's working directory.
pub const DEMO_FILE: &str = "openturn-demo.txt";

const COMMAND_CALL: &str = "call_demo_cmd_";
const EDIT_CALL: &str = "call_demo_edit_";

/// The `demo` provider: answers every request with [`answer`].
pub fn demo_responder() -> Responder {
    Responder::new(answer)
}

/// What one turn of the demo does, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Command,
    Edit,
}

/// The steps the user's words ask for; none means a greeting that says what to ask.
fn plan(prompt: &str) -> Vec<Step> {
    let words = prompt.to_lowercase();
    let any = |keys: &[&str]| keys.iter().any(|key| words.contains(key));
    if any(&["tour", "everything", "both", "all of it"]) {
        return vec![Step::Command, Step::Edit];
    }
    let mut steps = Vec::new();
    if any(&["command", "run", "shell", "exec", "approv"]) {
        steps.push(Step::Command);
    }
    if any(&["edit", "file", "patch", "write", "change"]) {
        steps.push(Step::Edit);
    }
    steps
}

/// The reply to one `POST …/responses` (or WebSocket `response.create`).
pub fn answer(request: &RecordedRequest) -> Reply {
    let body = &request.body;
    let input = body["input"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let (prompt_at, prompt) = last_prompt(input);
    let since_prompt = &input[prompt_at.map_or(0, |at| at + 1)..];
    let steps = plan(&prompt);
    let done: Vec<(Step, String)> = steps
        .iter()
        .filter_map(|step| Some((*step, output_of(since_prompt, *step)?)))
        .collect();
    let first_response = done.is_empty();
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let tag = &tag[..12];
    let mut builder = ResponseBuilder::new(format!("resp_demo_{tag}")).created();
    if first_response {
        builder = builder.reasoning(&format!("rs_demo_{tag}"), &[&reasoning(&steps)]);
    }
    let next = steps
        .iter()
        .find(|step| !done.iter().any(|(finished, _)| finished == *step));
    builder = match next {
        Some(Step::Command) => builder.exec_call(
            &format!("fc_demo_{tag}"),
            &format!("{COMMAND_CALL}{tag}"),
            json!({
                "cmd": DEMO_COMMAND,
                "login": false,
                "sandbox_permissions": "require_escalated",
                "justification": "The demo asks before it runs anything, so you can see an approval request.",
            }),
        ),
        Some(Step::Edit) => edit_call(builder, body, tag),
        None if steps.is_empty() => message(builder, tag, &greeting()),
        None => message(builder, tag, &summary(&done)),
    };
    builder.completed(Usage::small(), None).build()
}

/// The user's last message (index in `input` and text), skipping the context blocks a client
/// sends in the user role (environment, project instructions), which are tagged or headed.
fn last_prompt(input: &[Value]) -> (Option<usize>, String) {
    for (index, item) in input.iter().enumerate().rev() {
        if item["type"] != "message" || item["role"] != "user" {
            continue;
        }
        let text: String = item["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let trimmed = text.trim_start();
        if trimmed.starts_with('<') || trimmed.starts_with("# AGENTS.md") {
            continue;
        }
        return (Some(index), text);
    }
    (None, String::new())
}

/// The output the daemon sent back for `step`'s call, if that call is in `items`.
fn output_of(items: &[Value], step: Step) -> Option<String> {
    let prefix = match step {
        Step::Command => COMMAND_CALL,
        Step::Edit => EDIT_CALL,
    };
    let output = items.iter().find(|item| {
        matches!(
            item["type"].as_str(),
            Some("function_call_output" | "custom_tool_call_output")
        ) && item["call_id"]
            .as_str()
            .is_some_and(|id| id.starts_with(prefix))
    })?;
    Some(match &output["output"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    })
}

/// An `apply_patch` call in the form the request offers it (freeform or JSON function).
fn edit_call(builder: ResponseBuilder, body: &Value, tag: &str) -> ResponseBuilder {
    let patch = format!(
        "*** Begin Patch\n*** Add File: {DEMO_FILE}\n+Written by openturn's offline demo provider.\n\
         +apply_patch created this file after the edit was allowed.\n*** End Patch\n"
    );
    let item_id = format!("ctc_demo_{tag}");
    let call_id = format!("{EDIT_CALL}{tag}");
    let offered = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|tool| tool["name"] == "apply_patch");
    match offered.and_then(|tool| tool["type"].as_str()) {
        Some("custom") => {
            let pieces = split_text(&patch, 3);
            builder.custom_tool_call(&item_id, &call_id, "apply_patch", &pieces)
        }
        Some(_) => {
            builder.function_call_json(&item_id, &call_id, "apply_patch", json!({ "input": patch }))
        }
        None => message(
            builder,
            tag,
            "I would edit a file now, but this request offers no `apply_patch` tool.",
        ),
    }
}

/// An assistant message streamed a few words at a time, as a model would.
fn message(builder: ResponseBuilder, tag: &str, text: &str) -> ResponseBuilder {
    let pieces: Vec<&str> = text.split_inclusive(' ').collect();
    let deltas: Vec<String> = pieces.chunks(3).map(|chunk| chunk.concat()).collect();
    let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
    builder.text_message(&format!("msg_demo_{tag}"), &deltas)
}

fn reasoning(steps: &[Step]) -> Vec<&'static str> {
    let title = "**Reading the request**\n\n";
    match steps {
        [] => vec![
            title,
            "No command or edit was asked for, ",
            "so I will say hello and list what this demo can show.",
        ],
        [Step::Command] => vec![
            title,
            "The user wants a command run. ",
            "I will ask to run it outside the sandbox, which needs their approval.",
        ],
        [Step::Edit] => vec![
            title,
            "The user wants a file edited. ",
            "I will send a patch that adds one small file.",
        ],
        _ => vec![
            title,
            "The user wants the whole tour: ",
            "first a command that needs approval, then a file edit.",
        ],
    }
}

fn greeting() -> String {
    format!(
        "Hello! This is openturn's built-in demo provider: offline, no key, scripted answers. \
         Ask me to \"run a command\" and you will be asked to approve `{DEMO_COMMAND}`, ask me to \
         \"edit a file\" and I will send a patch that adds {DEMO_FILE}, or ask for \"the tour\" \
         to see both. For real answers, set model_provider to a real provider."
    )
}

/// The closing message: what became of each step, read from the tool outputs.
fn summary(done: &[(Step, String)]) -> String {
    let mut lines = vec!["Done. Here is what happened:".to_string()];
    for (step, output) in done {
        lines.push(match step {
            Step::Command => command_outcome(output),
            Step::Edit => edit_outcome(output),
        });
    }
    lines.join("\n")
}

fn command_outcome(output: &str) -> String {
    let printed = output
        .split_once("Output:\n")
        .map(|(_, printed)| printed.lines().find(|line| !line.trim().is_empty()));
    // `exec_command` reports "Process exited with code N" (older outputs said "Exit code: N").
    let ran = output.contains("Process exited with code") || output.contains("Exit code:");
    match (ran, printed) {
        (true, Some(Some(first))) => format!("- the command ran and printed: {}", short(first)),
        (true, _) => "- the command ran and printed nothing".to_string(),
        (false, _) => format!("- the command did not run: {}", short(first_line(output))),
    }
}

fn edit_outcome(output: &str) -> String {
    if output.starts_with("Success") {
        format!("- the patch was applied: {DEMO_FILE} is in the thread's working directory")
    } else {
        format!("- the patch was not applied: {}", short(first_line(output)))
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
}

fn short(text: &str) -> String {
    const MAX: usize = 160;
    let text = text.trim();
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
#[path = "demo_answers_tests.rs"]
mod tests;
