//! Hand-written conversions between core's domain types and protocol types. The only place that
//! knows both.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::core::event::TokenUsage;
use crate::core::{self, TurnErrorKind};
use crate::protocol::approval::DynamicToolCallOutputContentItem;
use crate::protocol::common::{AskForApproval, SandboxMode, SandboxPolicy};
use crate::protocol::goal::{ThreadGoal, ThreadGoalStatus};
use crate::protocol::item::{
    FileUpdateChange, McpToolCallError, McpToolCallResult, PatchChangeKind, ThreadItem,
    ThreadItemDetails, WebSearchAction,
};
use crate::protocol::notification::TokenUsageBreakdown;
use crate::protocol::turn::{TurnError, TurnPlanStep, TurnPlanStepStatus, UserInput};

pub(crate) fn thread_item(
    item: &core::TurnItem,
    started_at_ms: Option<i64>,
    completed_at_ms: Option<i64>,
) -> ThreadItem {
    let details = match item {
        core::TurnItem::UserMessage {
            id,
            content,
            client_id,
        } => ThreadItemDetails::UserMessage {
            id: id.to_string(),
            content: content.iter().map(user_input_out).collect(),
            client_id: client_id.clone(),
        },
        core::TurnItem::AgentMessage {
            id,
            text,
            phase,
            memory_citation,
        } => ThreadItemDetails::AgentMessage {
            id: id.to_string(),
            text: text.clone(),
            phase: phase.clone(),
            moderation: None,
            memory_citation: memory_citation.as_ref().map(memory_citation_out),
            delivery: None,
            questions: None,
        },
        core::TurnItem::Reasoning {
            id,
            summary,
            content,
        } => ThreadItemDetails::Reasoning {
            id: id.to_string(),
            summary: summary.clone(),
            content: content.clone(),
        },
        core::TurnItem::Plan { id, text } => ThreadItemDetails::Plan {
            id: id.to_string(),
            text: text.clone(),
        },
        core::TurnItem::CommandExecution {
            id,
            command,
            cwd,
            status,
            aggregated_output,
            exit_code,
            duration_ms,
            process_id,
            raw_command,
        } => ThreadItemDetails::CommandExecution {
            id: id.to_string(),
            command: command.clone(),
            cwd: cwd.clone(),
            process_id: process_id.clone(),
            source: "agent".to_string(),
            status: tool_status(*status).to_string(),
            command_actions: vec![json!({"type": "unknown", "command": raw_command})],
            aggregated_output: aggregated_output.clone(),
            exit_code: *exit_code,
            duration_ms: *duration_ms,
            plugin_id: None,
            script_path: None,
        },
        core::TurnItem::DynamicToolCall {
            id,
            tool,
            namespace,
            arguments,
            status,
            content_items,
            success,
            duration_ms,
        } => ThreadItemDetails::DynamicToolCall {
            id: id.to_string(),
            tool: tool.clone(),
            namespace: namespace.clone(),
            arguments: arguments.clone(),
            status: tool_status(*status).to_string(),
            content_items: content_items
                .as_ref()
                .map(|items| items.iter().map(tool_content_out).collect()),
            success: *success,
            duration_ms: *duration_ms,
        },
        core::TurnItem::McpToolCall {
            id,
            server,
            tool,
            arguments,
            status,
            result,
            error,
            duration_ms,
        } => ThreadItemDetails::McpToolCall {
            id: id.to_string(),
            server: server.clone(),
            tool: tool.clone(),
            status: tool_status(*status).to_string(),
            arguments: arguments.clone(),
            app_context: None,
            mcp_app_ui: None,
            plugin_id: None,
            read_only_hint: None,
            result: result.as_ref().map(mcp_result_out),
            error: error.as_ref().map(|message| McpToolCallError {
                message: message.clone(),
            }),
            duration_ms: *duration_ms,
        },
        core::TurnItem::FileChange {
            id,
            changes,
            status,
        } => ThreadItemDetails::FileChange {
            id: id.to_string(),
            changes: changes.iter().map(file_change_out).collect(),
            status: tool_status(*status).to_string(),
        },
        core::TurnItem::ContextCompaction { id, status, error } => {
            ThreadItemDetails::ContextCompaction {
                id: id.to_string(),
                status: tool_status(*status).to_string(),
                error: error.clone(),
            }
        }
        core::TurnItem::EnteredReviewMode { id, review } => ThreadItemDetails::EnteredReviewMode {
            id: id.to_string(),
            review: review.clone(),
        },
        core::TurnItem::ExitedReviewMode { id, review } => ThreadItemDetails::ExitedReviewMode {
            id: id.to_string(),
            review: review.clone(),
        },
        core::TurnItem::WebSearch { id, query, action } => ThreadItemDetails::WebSearch {
            id: id.to_string(),
            query: query.clone(),
            action: action.as_ref().map(web_search_action_out),
            results: None,
        },
        core::TurnItem::ImageView { id, path } => ThreadItemDetails::ImageView {
            id: id.to_string(),
            path: path.clone(),
        },
        core::TurnItem::CollabAgentToolCall {
            id,
            tool,
            status,
            sender_thread_id,
            receiver_thread_ids,
            prompt,
            model,
            reasoning_effort,
            agents_states,
        } => ThreadItemDetails::CollabAgentToolCall {
            id: id.to_string(),
            tool: tool.clone(),
            status: tool_status(*status).to_string(),
            sender_thread_id: sender_thread_id.clone(),
            receiver_thread_ids: receiver_thread_ids.clone(),
            prompt: prompt.clone(),
            model: model.clone(),
            reasoning_effort: reasoning_effort.clone(),
            agents_states: agents_states
                .iter()
                .map(|(id, (status, message))| {
                    let state = crate::protocol::item::CollabAgentState {
                        status: status.clone(),
                        message: message.clone(),
                    };
                    (id.clone(), state)
                })
                .collect(),
        },
    };
    ThreadItem {
        details,
        started_at_ms,
        completed_at_ms,
    }
}

fn web_search_action_out(action: &core::WebSearchAction) -> WebSearchAction {
    match action.clone() {
        core::WebSearchAction::Search { query, queries } => {
            WebSearchAction::Search { query, queries }
        }
        core::WebSearchAction::OpenPage { url } => WebSearchAction::OpenPage { url },
        core::WebSearchAction::FindInPage { url, pattern } => {
            WebSearchAction::FindInPage { url, pattern }
        }
        core::WebSearchAction::Other => WebSearchAction::Other,
    }
}

/// An MCP `CallToolResult` in the item's shape: its content blocks, structured content and meta.
fn mcp_result_out(result: &serde_json::Value) -> McpToolCallResult {
    McpToolCallResult {
        content: result
            .get("content")
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default(),
        structured_content: result.get("structuredContent").cloned(),
        meta: result.get("_meta").cloned(),
    }
}

/// A server's start-up state as `mcpServer/startupStatus/updated` tells it.
pub(crate) fn mcp_startup_status(
    thread_id: String,
    server: String,
    state: &crate::mcp::StartupState,
) -> crate::protocol::mcp::McpServerStartupStatusUpdatedNotification {
    use crate::mcp::StartupState;
    let (status, error) = match state {
        StartupState::Starting => ("starting", None),
        StartupState::Ready => ("ready", None),
        StartupState::Failed(reason) => ("failed", Some(reason.clone())),
    };
    crate::protocol::mcp::McpServerStartupStatusUpdatedNotification {
        thread_id: Some(thread_id),
        name: server,
        status: status.to_string(),
        error,
        failure_reason: None,
    }
}

pub(crate) fn file_change_out(change: &core::FileChangeEntry) -> FileUpdateChange {
    FileUpdateChange {
        path: change.path.clone(),
        kind: match &change.kind {
            core::FileChangeKind::Add => PatchChangeKind::Add,
            core::FileChangeKind::Delete => PatchChangeKind::Delete,
            core::FileChangeKind::Update { move_path } => PatchChangeKind::Update {
                move_path: move_path.clone(),
            },
        },
        diff: change.diff.clone(),
    }
}

pub(crate) fn tool_status(status: core::ToolItemStatus) -> &'static str {
    match status {
        core::ToolItemStatus::InProgress => "inProgress",
        core::ToolItemStatus::Completed => "completed",
        core::ToolItemStatus::Failed => "failed",
        core::ToolItemStatus::Declined => "declined",
    }
}

pub(crate) fn tool_content_out(content: &core::ToolContent) -> DynamicToolCallOutputContentItem {
    match content {
        core::ToolContent::InputText { text } => {
            DynamicToolCallOutputContentItem::InputText { text: text.clone() }
        }
        core::ToolContent::InputImage { image_url } => {
            DynamicToolCallOutputContentItem::InputImage {
                image_url: image_url.clone(),
            }
        }
    }
}

pub(crate) fn tool_content_in(content: DynamicToolCallOutputContentItem) -> core::ToolContent {
    match content {
        DynamicToolCallOutputContentItem::InputText { text } => {
            core::ToolContent::InputText { text }
        }
        DynamicToolCallOutputContentItem::InputImage { image_url } => {
            core::ToolContent::InputImage { image_url }
        }
    }
}

/// `dynamicTools` entries of `thread/start`: `{type?: "function", name, description,
/// inputSchema, deferLoading?}` or `{type: "namespace", name, tools: [...]}`. Entries that are
/// not tool definitions are refused by name, and so is a deferred tool outside a namespace
/// (`tool_search` lists found tools by namespace), as the reference does.
pub(crate) fn dynamic_tools_in(tools: &[Value]) -> Result<Vec<core::DynamicToolSpec>, String> {
    let mut out = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        match tool.get("type").and_then(Value::as_str) {
            Some("namespace") => {
                let namespace = tool.get("name").and_then(Value::as_str).map(str::to_string);
                for inner in tool
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    out.push(dynamic_tool(inner, namespace.clone(), index)?);
                }
            }
            None | Some("function") => out.push(dynamic_tool(tool, None, index)?),
            Some(other) => return Err(format!("dynamicTools[{index}]: unknown type `{other}`")),
        }
    }
    Ok(out)
}

fn dynamic_tool(
    tool: &Value,
    namespace: Option<String>,
    index: usize,
) -> Result<core::DynamicToolSpec, String> {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .ok_or_else(|| format!("dynamicTools[{index}]: `name` is required"))?;
    let defer_loading = tool
        .get("deferLoading")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if defer_loading && namespace.is_none() {
        return Err(format!(
            "dynamicTools[{index}]: deferred dynamic tool must include a namespace: {name}"
        ));
    }
    Ok(core::DynamicToolSpec {
        name: name.to_string(),
        namespace,
        defer_loading,
        description: tool
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        input_schema: tool
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    })
}

fn user_input_out(input: &core::UserInput) -> UserInput {
    match input {
        core::UserInput::Text { text } => UserInput::Text {
            text: text.clone(),
            text_elements: Vec::new(),
        },
        core::UserInput::Image { url, detail } => UserInput::Image {
            url: Some(url.clone()),
            file_id: None,
            detail: detail.clone(),
        },
        core::UserInput::LocalImage { path, detail } => UserInput::LocalImage {
            path: path.clone(),
            detail: detail.clone(),
        },
        core::UserInput::Skill { name, path } => UserInput::Skill {
            name: name.clone(),
            path: path.clone(),
        },
        core::UserInput::Mention { name, path } => UserInput::Mention {
            name: name.clone(),
            path: path.clone(),
        },
    }
}

/// Client input → core input. Remote image URLs are refused, as the reference does.
pub(crate) fn user_input_in(input: &[UserInput]) -> Result<Vec<core::UserInput>, String> {
    input
        .iter()
        .map(|part| match part {
            UserInput::Text { text, .. } => Ok(core::UserInput::Text { text: text.clone() }),
            UserInput::Image {
                url: Some(url),
                detail,
                ..
            } => {
                if url.starts_with("http://") || url.starts_with("https://") {
                    Err(
                        "remote image URLs are not supported; use an inline data URL instead"
                            .to_string(),
                    )
                } else {
                    Ok(core::UserInput::Image {
                        url: url.clone(),
                        detail: detail.clone(),
                    })
                }
            }
            UserInput::Image { .. } => Err("image input needs `url`".to_string()),
            UserInput::LocalImage { path, detail } => Ok(core::UserInput::LocalImage {
                path: path.clone(),
                detail: detail.clone(),
            }),
            UserInput::Skill { name, path } => Ok(core::UserInput::Skill {
                name: name.clone(),
                path: path.clone(),
            }),
            UserInput::Mention { name, path } => Ok(core::UserInput::Mention {
                name: name.clone(),
                path: path.clone(),
            }),
        })
        .collect()
}

pub(crate) fn turn_error(error: &core::TurnError) -> TurnError {
    TurnError {
        message: error.message.clone(),
        codex_error_info: Some(error_info(&error.kind)),
        additional_details: error.details.clone(),
        misalignment: None,
    }
}

fn error_info(kind: &TurnErrorKind) -> Value {
    let with_status =
        |name: &str, status: &Option<u16>| json!({ name: { "httpStatusCode": status } });
    match kind {
        TurnErrorKind::ContextWindowExceeded => json!("contextWindowExceeded"),
        TurnErrorKind::UsageLimitExceeded => json!("usageLimitExceeded"),
        TurnErrorKind::RateLimitExceeded => json!("rateLimitExceeded"),
        TurnErrorKind::ServerOverloaded => json!("serverOverloaded"),
        TurnErrorKind::Unauthorized => json!("unauthorized"),
        TurnErrorKind::BadRequest => json!("badRequest"),
        TurnErrorKind::InternalServerError => json!("internalServerError"),
        TurnErrorKind::Other => json!("other"),
        TurnErrorKind::HttpConnectionFailed { status } => {
            with_status("httpConnectionFailed", status)
        }
        TurnErrorKind::ResponseStreamDisconnected { status } => {
            with_status("responseStreamDisconnected", status)
        }
        TurnErrorKind::ResponseTooManyFailedAttempts { status } => {
            with_status("responseTooManyFailedAttempts", status)
        }
    }
}

pub(crate) fn usage(usage: &TokenUsage) -> TokenUsageBreakdown {
    TokenUsageBreakdown {
        total_tokens: usage.total_tokens,
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_write_input_tokens: 0,
        output_tokens: usage.output_tokens,
        reasoning_output_tokens: usage.reasoning_output_tokens,
    }
}

pub(crate) fn approval_policy_out(policy: core::ApprovalPolicy) -> AskForApproval {
    match policy {
        core::ApprovalPolicy::Untrusted => AskForApproval::Untrusted,
        core::ApprovalPolicy::OnRequest => AskForApproval::OnRequest,
        core::ApprovalPolicy::Never => AskForApproval::Never,
    }
}

pub(crate) fn approval_policy_in(policy: AskForApproval) -> core::ApprovalPolicy {
    match policy {
        AskForApproval::Untrusted => core::ApprovalPolicy::Untrusted,
        AskForApproval::OnRequest => core::ApprovalPolicy::OnRequest,
        AskForApproval::Never => core::ApprovalPolicy::Never,
    }
}

pub(crate) fn sandbox_mode_in(mode: SandboxMode) -> core::SandboxMode {
    match mode {
        SandboxMode::ReadOnly => core::SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite => core::SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess => core::SandboxMode::DangerFullAccess,
    }
}

/// A `sandboxPolicy` object as (mode, extra writable roots, network access). An external
/// sandbox is the user's own confinement of the whole daemon, so openturn adds none: it maps to
/// `danger-full-access`. Relative writable roots are left out (a grant must name a fixed place).
pub(crate) fn sandbox_policy_in(policy: &SandboxPolicy) -> (core::SandboxMode, Vec<PathBuf>, bool) {
    match policy {
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => {
            (core::SandboxMode::DangerFullAccess, Vec::new(), true)
        }
        SandboxPolicy::ReadOnly { network_access } => {
            (core::SandboxMode::ReadOnly, Vec::new(), *network_access)
        }
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            ..
        } => (
            core::SandboxMode::WorkspaceWrite,
            writable_roots
                .iter()
                .map(PathBuf::from)
                .filter(|root| root.is_absolute())
                .collect(),
            *network_access,
        ),
    }
}

/// The thread's sandbox as the protocol reports it: the mode, its network access and, for
/// `workspace-write`, every writable root (the cwd first).
pub(crate) fn sandbox_policy_out(settings: &core::ThreadSettings) -> SandboxPolicy {
    let network_access = settings.sandbox_network_access;
    match settings.sandbox {
        core::SandboxMode::ReadOnly => SandboxPolicy::ReadOnly { network_access },
        core::SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots: std::iter::once(&settings.cwd)
                .chain(&settings.sandbox_writable_roots)
                .map(|root| root.display().to_string())
                .collect(),
            network_access,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        },
        core::SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
    }
}

/// `MemoryCitation` as the reference's schema spells it (camelCase, all fields required).
fn memory_citation_out(citation: &core::MemoryCitation) -> Value {
    serde_json::json!({
        "entries": citation.entries.iter().map(|entry| serde_json::json!({
            "path": entry.path,
            "lineStart": entry.line_start,
            "lineEnd": entry.line_end,
            "note": entry.note,
        })).collect::<Vec<_>>(),
        "threadIds": citation.thread_ids,
    })
}

/// A plan step as `turn/plan/updated` carries it.
pub(crate) fn plan_step(step: &core::event::PlanStep) -> TurnPlanStep {
    TurnPlanStep {
        step: step.step.clone(),
        status: match step.status {
            core::event::PlanStepStatus::Pending => TurnPlanStepStatus::Pending,
            core::event::PlanStepStatus::InProgress => TurnPlanStepStatus::InProgress,
            core::event::PlanStepStatus::Completed => TurnPlanStepStatus::Completed,
        },
    }
}

/// A core goal as clients see it.
pub(crate) fn goal(thread_id: &str, goal: &crate::core::goal::Goal) -> ThreadGoal {
    use crate::core::goal::GoalStatus as Core;
    ThreadGoal {
        thread_id: thread_id.to_string(),
        objective: goal.objective.clone(),
        status: match goal.status {
            Core::Active => ThreadGoalStatus::Active,
            Core::Paused => ThreadGoalStatus::Paused,
            Core::Blocked => ThreadGoalStatus::Blocked,
            Core::UsageLimited => ThreadGoalStatus::UsageLimited,
            Core::BudgetLimited => ThreadGoalStatus::BudgetLimited,
            Core::Complete => ThreadGoalStatus::Complete,
        },
        token_budget: goal.token_budget,
        tokens_used: goal.tokens_used,
        time_used_seconds: goal.time_used_seconds(),
        created_at: goal.created_at,
        updated_at: goal.updated_at,
    }
}

/// A client's goal status in core's terms.
pub(crate) fn goal_status_in(status: ThreadGoalStatus) -> crate::core::goal::GoalStatus {
    use crate::core::goal::GoalStatus as Core;
    match status {
        ThreadGoalStatus::Active => Core::Active,
        ThreadGoalStatus::Paused => Core::Paused,
        ThreadGoalStatus::Blocked => Core::Blocked,
        ThreadGoalStatus::UsageLimited => Core::UsageLimited,
        ThreadGoalStatus::BudgetLimited => Core::BudgetLimited,
        ThreadGoalStatus::Complete => Core::Complete,
    }
}
