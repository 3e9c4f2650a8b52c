//! From the server's v2 notifications to exec events: a reducer with no I/O. It numbers items
//! in order of first appearance (`item_0`, …), keeps the thread's cumulative usage, the last agent
//! message (for `-o`), and — with `--stream` — the text streamed so far per item.
//!
//! Like the reference, agent messages and reasoning appear once, at `item.completed`; a command
//! appears at `item.started` and `item.completed`. `--stream` adds `item.started` and one
//! `item.updated` per delta for agent messages and reasoning.

use std::collections::HashMap;

use serde_json::Value;

use super::events::{
    snake_status, ErrorMessage, ExecEvent, ExecItem, ExecItemDetails, FileChange, TodoItem, Usage,
};

/// How a turn ended, as exec reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    Completed,
    Failed(String),
    Interrupted,
}

#[derive(Debug, Default)]
pub struct EventMapper {
    stream: bool,
    next_item: u64,
    /// Server item id → exec item id.
    item_ids: HashMap<String, String>,
    /// Text streamed so far per server item id (agent messages and reasoning, `--stream` only).
    streamed: HashMap<String, String>,
    /// The todo list of the turn, opened by the first plan update.
    todo_list: Option<(String, Vec<TodoItem>)>,
    pub usage: Usage,
    pub last_agent_message: Option<String>,
    /// Set by `turn/completed`.
    pub outcome: Option<TurnOutcome>,
    /// The message of the last fatal `error` notification, for a failed turn without one.
    last_error: Option<String>,
}

impl EventMapper {
    pub fn new(stream: bool) -> EventMapper {
        EventMapper {
            stream,
            ..EventMapper::default()
        }
    }

    /// The events one notification produces (often none).
    pub fn map(&mut self, method: &str, params: &Value) -> Vec<ExecEvent> {
        match method {
            "turn/started" => vec![ExecEvent::TurnStarted {}],
            "item/started" => self.item_started(&params["item"]),
            "item/completed" => self.item_completed(&params["item"]),
            "item/agentMessage/delta" => self.delta(params, false),
            "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta" => {
                self.delta(params, true)
            }
            "item/reasoning/summaryPartAdded" => self.summary_part_added(params),
            "thread/tokenUsage/updated" => {
                self.usage = Usage::from_breakdown(&params["tokenUsage"]["total"]);
                Vec::new()
            }
            "turn/plan/updated" => self.plan_updated(params),
            "warning" => {
                let message = params["message"].as_str().unwrap_or_default().to_string();
                let id = self.fresh_id();
                vec![ExecEvent::ItemCompleted {
                    item: ExecItem {
                        id,
                        details: ExecItemDetails::Error { message },
                    },
                }]
            }
            "error" => self.error(params),
            "turn/completed" => self.turn_completed(&params["turn"]),
            _ => Vec::new(),
        }
    }

    fn fresh_id(&mut self) -> String {
        let id = format!("item_{}", self.next_item);
        self.next_item += 1;
        id
    }

    fn exec_id(&mut self, server_id: &str) -> String {
        if let Some(id) = self.item_ids.get(server_id) {
            return id.clone();
        }
        let id = self.fresh_id();
        self.item_ids.insert(server_id.to_string(), id.clone());
        id
    }

    fn item_started(&mut self, item: &Value) -> Vec<ExecEvent> {
        let server_id = item["id"].as_str().unwrap_or_default();
        let streams_text = matches!(item["type"].as_str(), Some("agentMessage" | "reasoning"));
        if streams_text && !self.stream {
            return Vec::new();
        }
        let Some(details) = details_of(item) else {
            return Vec::new();
        };
        if streams_text {
            self.streamed.insert(server_id.to_string(), String::new());
        }
        let id = self.exec_id(server_id);
        vec![ExecEvent::ItemStarted {
            item: ExecItem { id, details },
        }]
    }

    fn item_completed(&mut self, item: &Value) -> Vec<ExecEvent> {
        let server_id = item["id"].as_str().unwrap_or_default();
        self.streamed.remove(server_id);
        let Some(details) = details_of(item) else {
            return Vec::new();
        };
        // Like the reference, reasoning with no text to show is not reported.
        if matches!(&details, ExecItemDetails::Reasoning { text } if text.is_empty())
            && !self.item_ids.contains_key(server_id)
        {
            return Vec::new();
        }
        if let ExecItemDetails::AgentMessage { text } = &details {
            self.last_agent_message = Some(text.clone());
        }
        let id = self.exec_id(server_id);
        vec![ExecEvent::ItemCompleted {
            item: ExecItem { id, details },
        }]
    }

    /// `--stream`: the text so far of an agent message or a reasoning item.
    fn delta(&mut self, params: &Value, reasoning: bool) -> Vec<ExecEvent> {
        let server_id = params["itemId"].as_str().unwrap_or_default();
        let delta = params["delta"].as_str().unwrap_or_default();
        let Some(text) = self.streamed.get_mut(server_id) else {
            return Vec::new();
        };
        text.push_str(delta);
        let text = text.clone();
        let Some(id) = self.item_ids.get(server_id).cloned() else {
            return Vec::new();
        };
        let details = if reasoning {
            ExecItemDetails::Reasoning { text }
        } else {
            ExecItemDetails::AgentMessage { text }
        };
        vec![ExecEvent::ItemUpdated {
            item: ExecItem { id, details },
        }]
    }

    /// A new summary part starts a new line of the streamed reasoning text, as the
    /// completed item joins its parts.
    fn summary_part_added(&mut self, params: &Value) -> Vec<ExecEvent> {
        let server_id = params["itemId"].as_str().unwrap_or_default();
        if let Some(text) = self.streamed.get_mut(server_id) {
            if !text.is_empty() {
                text.push('\n');
            }
        }
        Vec::new()
    }

    fn plan_updated(&mut self, params: &Value) -> Vec<ExecEvent> {
        let items: Vec<TodoItem> = params["plan"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|step| TodoItem {
                text: step["step"].as_str().unwrap_or_default().to_string(),
                completed: step["status"] == "completed",
            })
            .collect();
        match &mut self.todo_list {
            Some((id, current)) => {
                *current = items.clone();
                vec![ExecEvent::ItemUpdated {
                    item: ExecItem {
                        id: id.clone(),
                        details: ExecItemDetails::TodoList { items },
                    },
                }]
            }
            None => {
                let id = self.fresh_id();
                self.todo_list = Some((id.clone(), items.clone()));
                vec![ExecEvent::ItemStarted {
                    item: ExecItem {
                        id,
                        details: ExecItemDetails::TodoList { items },
                    },
                }]
            }
        }
    }

    /// A fatal error is reported at once; one the server retries is not (the retry may
    /// succeed, and the reference stays quiet too).
    fn error(&mut self, params: &Value) -> Vec<ExecEvent> {
        if params["willRetry"].as_bool().unwrap_or(false) {
            return Vec::new();
        }
        let message = params["error"]["message"]
            .as_str()
            .unwrap_or("unknown error")
            .to_string();
        self.last_error = Some(message.clone());
        vec![ExecEvent::Error { message }]
    }

    fn turn_completed(&mut self, turn: &Value) -> Vec<ExecEvent> {
        let mut events = Vec::new();
        if let Some((id, items)) = self.todo_list.take() {
            events.push(ExecEvent::ItemCompleted {
                item: ExecItem {
                    id,
                    details: ExecItemDetails::TodoList { items },
                },
            });
        }
        let outcome = match turn["status"].as_str() {
            Some("completed") => TurnOutcome::Completed,
            Some("interrupted") => TurnOutcome::Interrupted,
            _ => TurnOutcome::Failed(
                turn["error"]["message"]
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| self.last_error.clone())
                    .unwrap_or_else(|| "the turn failed".to_string()),
            ),
        };
        events.push(match &outcome {
            TurnOutcome::Completed => ExecEvent::TurnCompleted { usage: self.usage },
            TurnOutcome::Failed(message) => ExecEvent::TurnFailed {
                error: ErrorMessage {
                    message: message.clone(),
                },
            },
            TurnOutcome::Interrupted => ExecEvent::TurnFailed {
                error: ErrorMessage {
                    message: "turn interrupted".to_string(),
                },
            },
        });
        self.outcome = Some(outcome);
        events
    }
}

/// The exec details of a protocol item; `None` for kinds exec does not report (user messages,
/// plan-mode text, client tool calls).
pub fn details_of(item: &Value) -> Option<ExecItemDetails> {
    let text = |key: &str| item[key].as_str().unwrap_or_default().to_string();
    let status = || snake_status(item["status"].as_str().unwrap_or("inProgress"));
    match item["type"].as_str()? {
        "agentMessage" => Some(ExecItemDetails::AgentMessage { text: text("text") }),
        "reasoning" => Some(ExecItemDetails::Reasoning {
            text: reasoning_text(item),
        }),
        "commandExecution" => Some(ExecItemDetails::CommandExecution {
            command: text("command"),
            aggregated_output: text("aggregatedOutput"),
            exit_code: item["exitCode"].as_i64(),
            status: status(),
        }),
        "fileChange" => Some(ExecItemDetails::FileChange {
            changes: item["changes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|change| FileChange {
                    path: change["path"].as_str().unwrap_or_default().to_string(),
                    kind: change["kind"]["type"]
                        .as_str()
                        .or(change["kind"].as_str())
                        .unwrap_or("update")
                        .to_string(),
                })
                .collect(),
            status: status(),
        }),
        "mcpToolCall" => Some(ExecItemDetails::McpToolCall {
            server: text("server"),
            tool: text("tool"),
            arguments: item["arguments"].clone(),
            result: item.get("result").filter(|r| !r.is_null()).map(|r| {
                serde_json::json!({
                    "content": r["content"].clone(),
                    "structured_content": r["structuredContent"].clone(),
                })
            }),
            error: item["error"]["message"].as_str().map(|m| ErrorMessage {
                message: m.to_string(),
            }),
            status: status(),
        }),
        _ => None,
    }
}

/// The summary parts one per line (as the reference joins them); the raw reasoning text when
/// there is no summary.
fn reasoning_text(item: &Value) -> String {
    let joined = |key: &str| {
        item[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let summary = joined("summary");
    if summary.is_empty() {
        joined("content")
    } else {
        summary
    }
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
