//! Output for a person (no `--json`): the answer streams to stdout as it arrives; reasoning,
//! commands and problems go to stderr, dimmed when stderr is a terminal, so `> answer.txt` keeps
//! only the answer. A retry is one line saying what is retried and why; the error that ends the
//! turn is said once, by the one-line summary (outcome, tokens, time) that ends the run on stderr.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use serde_json::Value;

use super::events::Usage;
use super::mapping::TurnOutcome;

/// How many lines of a command's output are shown; the rest is summarised by its line count.
const OUTPUT_LINES_SHOWN: usize = 10;

pub struct HumanOutput {
    dim: bool,
    /// Agent messages that printed at least one delta (their completed text is not repeated).
    streamed_messages: HashSet<String>,
    /// Reasoning items whose "thinking" line is open on stderr.
    open_reasoning: HashSet<String>,
    /// Whether stdout ended with a newline (or nothing was written yet).
    stdout_at_line_start: bool,
    /// The last error that was not retried, shown by the summary unless it names the same one.
    final_error: Option<String>,
}

impl HumanOutput {
    pub fn new() -> HumanOutput {
        HumanOutput {
            dim: std::io::stderr().is_terminal(),
            streamed_messages: HashSet::new(),
            open_reasoning: HashSet::new(),
            stdout_at_line_start: true,
            final_error: None,
        }
    }

    /// A note on stderr, dimmed on a terminal.
    pub fn note(&self, text: &str) {
        let mut stderr = std::io::stderr().lock();
        let _ = if self.dim {
            write!(stderr, "\x1b[2m{text}\x1b[0m")
        } else {
            write!(stderr, "{text}")
        };
        let _ = stderr.flush();
    }

    fn answer(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
        self.stdout_at_line_start = text.ends_with('\n');
    }

    fn end_answer_line(&mut self) {
        if !self.stdout_at_line_start {
            self.answer("\n");
        }
    }

    pub fn thread_started(&self, thread_id: &str, model: &str, provider: &str, resumed: bool) {
        let verb = if resumed { "resumed" } else { "thread" };
        self.note(&format!(
            "openturn exec · {verb} {thread_id} · model {model} · provider {provider}\n"
        ));
    }

    pub fn notification(&mut self, method: &str, params: &Value) {
        match method {
            "item/agentMessage/delta" => {
                let id = params["itemId"].as_str().unwrap_or_default();
                self.streamed_messages.insert(id.to_string());
                self.answer(params["delta"].as_str().unwrap_or_default());
            }
            "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta" => {
                let id = params["itemId"].as_str().unwrap_or_default().to_string();
                if self.open_reasoning.insert(id) {
                    self.note("thinking: ");
                }
                self.note(params["delta"].as_str().unwrap_or_default());
            }
            "item/started" => self.item_started(&params["item"]),
            "item/completed" => self.item_completed(&params["item"]),
            "warning" => self.note(&format!(
                "warning: {}\n",
                params["message"].as_str().unwrap_or_default()
            )),
            "error" => self.error(params),
            _ => {}
        }
    }

    /// A retry gets one line (what is retried, and why); the error that ends the turn is kept
    /// for the summary, which says it once.
    fn error(&mut self, params: &Value) {
        let error = &params["error"];
        let message = error["message"].as_str().unwrap_or_default();
        if !params["willRetry"].as_bool().unwrap_or(false) {
            self.final_error = Some(message.to_string());
            return;
        }
        self.end_answer_line();
        match error["additionalDetails"]
            .as_str()
            .filter(|d| !d.is_empty())
        {
            Some(details) => self.note(&format!("{message}: {details}\n")),
            None => self.note(&format!("{message}\n")),
        }
    }

    fn item_started(&mut self, item: &Value) {
        if item["type"] == "commandExecution" {
            self.end_answer_line();
            self.note(&format!(
                "$ {}\n",
                item["command"].as_str().unwrap_or_default()
            ));
        }
    }

    fn item_completed(&mut self, item: &Value) {
        let id = item["id"].as_str().unwrap_or_default();
        match item["type"].as_str() {
            Some("agentMessage") => {
                if !self.streamed_messages.remove(id) {
                    self.answer(item["text"].as_str().unwrap_or_default());
                }
                self.end_answer_line();
            }
            Some("reasoning") if self.open_reasoning.remove(id) => self.note("\n"),
            Some("commandExecution") => self.command_completed(item),
            _ => {}
        }
    }

    fn command_completed(&mut self, item: &Value) {
        let output = item["aggregatedOutput"].as_str().unwrap_or_default();
        let lines: Vec<&str> = output.lines().collect();
        for line in lines.iter().take(OUTPUT_LINES_SHOWN) {
            self.note(&format!("  {line}\n"));
        }
        if lines.len() > OUTPUT_LINES_SHOWN {
            self.note(&format!(
                "  … {} more lines\n",
                lines.len() - OUTPUT_LINES_SHOWN
            ));
        }
        let status = item["status"].as_str().unwrap_or_default();
        match item["exitCode"].as_i64() {
            Some(code) => self.note(&format!("  ({status}, exit {code})\n")),
            None => self.note(&format!("  ({status})\n")),
        }
    }

    /// The last line: how the turn ended, tokens and time.
    pub fn summary(&mut self, outcome: &TurnOutcome, usage: &Usage, elapsed: Duration) {
        self.end_answer_line();
        let ended = match outcome {
            TurnOutcome::Completed => "done".to_string(),
            TurnOutcome::Interrupted => "interrupted".to_string(),
            TurnOutcome::Failed(message) => format!("failed: {message}"),
        };
        // An error the turn did not end with (a failed compaction the turn got past, say) is
        // still worth its own line; the one it ended with is in the summary.
        if let Some(error) = self.final_error.take() {
            if !matches!(outcome, TurnOutcome::Failed(message) if *message == error) {
                self.note(&format!("error: {error}\n"));
            }
        }
        self.note(&format!(
            "{ended} · tokens: {} in ({} cached), {} out ({} reasoning) · {:.1}s\n",
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
            usage.reasoning_output_tokens,
            elapsed.as_secs_f64()
        ));
    }
}

impl Default for HumanOutput {
    fn default() -> Self {
        HumanOutput::new()
    }
}
