//! `request_user_input`: the model puts one to three short questions to the user and waits. The
//! questions go to the client as a server request; the answers, keyed by question id, become the
//! call's output. When nobody answers — the client declines, errs, times out, or runs headless —
//! the model is told plainly that no answer came, so it can go on with its own judgement.

use serde::Deserialize;
use serde_json::{json, Value};

use super::super::approval::{ClientReply, ClientRequestKind, UserInputRequest, UserQuestion};
use super::super::ids::ItemId;
use super::handle::TurnHandle;
use super::output::ToolOutput;

pub(crate) const TOOL_NAME: &str = "request_user_input";

/// The most questions one call may ask.
const MAX_QUESTIONS: usize = 3;

/// What the model sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestUserInputArgs {
    pub questions: Vec<UserQuestion>,
}

impl RequestUserInputArgs {
    pub(crate) fn check(&self) -> Result<(), String> {
        match self.questions.len() {
            0 => Err("request_user_input: give at least one question".to_string()),
            n if n > MAX_QUESTIONS => Err(format!(
                "request_user_input: {n} questions given; ask at most {MAX_QUESTIONS}"
            )),
            _ => Ok(()),
        }
    }
}

pub(crate) fn spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": "Ask the user one to three short questions and wait for the answers. Use it \
    only when a choice is theirs to make and guessing would waste work; otherwise decide and say what \
    you assumed.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "description": "The questions, one to three; one is best.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "A snake_case id the answer comes back under."},
                            "header": {"type": "string", "description": "A label of at most 12 characters for the question."},
                            "question": {"type": "string", "description": "The question, in one sentence."},
                            "options": {
                                "type": "array",
                                "description": "Two or three choices that exclude each other, the one you recommend first. The user can always answer in their own words instead.",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": {"type": "string", "description": "The choice, in one to five words."},
                                        "description": {"type": "string", "description": "What choosing it means, in one sentence."},
                                    },
                                    "required": ["label", "description"],
                                    "additionalProperties": false,
                                },
                            },
                        },
                        "required": ["id", "header", "question", "options"],
                        "additionalProperties": false,
                    },
                },
            },
            "required": ["questions"],
            "additionalProperties": false,
        },
    })
}

/// Asks the client. `None` when the turn ended before an answer.
pub(crate) async fn run(
    turn: &TurnHandle,
    call_id: ItemId,
    args: RequestUserInputArgs,
) -> Option<ToolOutput> {
    let question = ClientRequestKind::UserInput(UserInputRequest {
        call_id: call_id.clone(),
        questions: args.questions,
    });
    let text = match turn.ask(question).await {
        ClientReply::Cancelled => {
            if turn.cancel.is_cancelled() {
                return None;
            }
            "No answer: the question could not reach the user. Continue without it, using your \
             best judgement, and say what you assumed."
                .to_string()
        }
        ClientReply::UserAnswers(answers) => answers_text(&answers),
        ClientReply::Failed(reason) => format!(
            "No answer: the user could not be asked ({reason}). Continue without it, using your \
             best judgement, and say what you assumed."
        ),
        ClientReply::Invalid
        | ClientReply::Decision(_)
        | ClientReply::ToolResult(_)
        | ClientReply::Elicitation(_) => {
            "No answer: the client's reply was not a valid answer. Continue without it, using \
             your best judgement, and say what you assumed."
                .to_string()
        }
    };
    Some(ToolOutput {
        call_id,
        custom: false,
        text,
    })
}

/// The answers as the model reads them: a JSON object of question id → answers.
fn answers_text(answers: &[(String, Vec<String>)]) -> String {
    let answers: serde_json::Map<String, Value> = answers
        .iter()
        .map(|(id, values)| (id.clone(), json!({ "answers": values })))
        .collect();
    json!({ "answers": answers }).to_string()
}
