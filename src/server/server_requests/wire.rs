//! The protocol form of the requests core asks (approvals, questions, elicitations, client-tool
//! calls) and the decoding of the client's replies into core's answers: the wire side of
//! [`super::ServerRequests`], which owns the pending requests themselves.

use serde_json::json;
use serde_json::value::RawValue;

use crate::core::approval::{
    ClientReply, ClientRequest, ClientRequestKind, ClientToolResult, CommandDecision,
};
use crate::core::TurnId;
use crate::protocol::approval::{
    CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse,
    DynamicToolCallParams, DynamicToolCallResponse, FileChangeRequestApprovalParams, ServerRequest,
    ToolRequestUserInputOption, ToolRequestUserInputParams, ToolRequestUserInputQuestion,
    ToolRequestUserInputResponse,
};
use crate::protocol::mcp::{
    McpServerElicitationRequestParams, McpServerElicitationRequestResponse,
};

use super::super::convert;

/// Which reply a request expects, so the answer is decoded as that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReplyKind {
    Decision,
    ToolResult,
    UserAnswers,
    Elicitation,
}

impl ReplyKind {
    /// Requests that put a question to the user (approvals, questions) say when it is settled
    /// with `serverRequest/resolved`; a client tool call's result needs no announcement.
    pub(super) fn announces_resolution(self) -> bool {
        self != ReplyKind::ToolResult
    }
}

/// The `turnId` of a request that must name one. Approvals, client tools and questions are asked
/// by a running turn, so only an elicitation between turns has none (it has its own field).
fn turn_id_field(request: &ClientRequest) -> String {
    request
        .turn_id
        .as_ref()
        .map(TurnId::to_string)
        .unwrap_or_default()
}

/// The protocol form of a core request and the reply it expects.
pub(super) fn wire_request(thread_id: &str, request: &ClientRequest) -> (ServerRequest, ReplyKind) {
    match &request.kind {
        ClientRequestKind::CommandApproval(approval) => (
            ServerRequest::CommandExecutionRequestApproval(CommandExecutionRequestApprovalParams {
                kind: "command".to_string(),
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                item_id: approval.item_id.to_string(),
                started_at_ms: request.started_at_ms,
                environment_id: "local".to_string(),
                reason: approval.reason.clone(),
                command: approval.command.clone(),
                cwd: approval.cwd.clone(),
                command_actions: vec![json!({"type": "unknown", "command": approval.raw_command})],
                available_decisions: vec![
                    json!("accept"),
                    json!("acceptForSession"),
                    json!("decline"),
                    json!("cancel"),
                ],
            }),
            ReplyKind::Decision,
        ),
        ClientRequestKind::FileChangeApproval { item_id, reason } => (
            ServerRequest::FileChangeRequestApproval(FileChangeRequestApprovalParams {
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                item_id: item_id.to_string(),
                started_at_ms: request.started_at_ms,
                reason: reason.clone(),
                grant_root: None,
            }),
            ReplyKind::Decision,
        ),
        ClientRequestKind::ToolCall(call) => (
            ServerRequest::DynamicToolCall(DynamicToolCallParams {
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                call_id: call.call_id.to_string(),
                namespace: call.namespace.clone(),
                tool: call.tool.clone(),
                arguments: call.arguments.clone(),
            }),
            ReplyKind::ToolResult,
        ),
        ClientRequestKind::UserInput(input) => (
            ServerRequest::ToolRequestUserInput(ToolRequestUserInputParams {
                thread_id: thread_id.to_string(),
                turn_id: turn_id_field(request),
                item_id: input.call_id.to_string(),
                is_blocking: true,
                questions: input
                    .questions
                    .iter()
                    .map(|question| ToolRequestUserInputQuestion {
                        id: question.id.clone(),
                        header: question.header.clone(),
                        question: question.question.clone(),
                        is_other: true,
                        is_secret: false,
                        options: Some(
                            question
                                .options
                                .iter()
                                .map(|option| ToolRequestUserInputOption {
                                    label: option.label.clone(),
                                    description: option.description.clone(),
                                })
                                .collect(),
                        ),
                    })
                    .collect(),
            }),
            ReplyKind::UserAnswers,
        ),
        ClientRequestKind::McpElicitation { server, params } => (
            ServerRequest::McpServerElicitationRequest(elicitation_params(
                thread_id, request, server, params,
            )),
            ReplyKind::Elicitation,
        ),
    }
}

/// An MCP elicitation as the protocol's request: the thread and turn it belongs to beside the
/// server's own fields.
fn elicitation_params(
    thread_id: &str,
    request: &ClientRequest,
    server: &str,
    params: &serde_json::Value,
) -> McpServerElicitationRequestParams {
    let text = |key: &str| params.get(key).and_then(|v| v.as_str()).map(str::to_string);
    McpServerElicitationRequestParams {
        thread_id: thread_id.to_string(),
        turn_id: request.turn_id.as_ref().map(TurnId::to_string),
        server_name: server.to_string(),
        mode: text("mode").unwrap_or_else(|| "form".to_string()),
        message: text("message").unwrap_or_default(),
        meta: params.get("_meta").cloned(),
        requested_schema: params.get("requestedSchema").cloned(),
        url: text("url"),
        elicitation_id: text("elicitationId"),
    }
}

/// `{"action": "accept" | "decline" | "cancel", "content"?: …}`; anything else is invalid.
pub(super) fn decode_elicitation(raw: &RawValue) -> ClientReply {
    match serde_json::from_str::<McpServerElicitationRequestResponse>(raw.get()) {
        Ok(response) if ["accept", "decline", "cancel"].contains(&response.action.as_str()) => {
            let mut answer = json!({"action": response.action});
            if let Some(content) = response.content {
                answer["content"] = content;
            }
            ClientReply::Elicitation(answer)
        }
        _ => ClientReply::Invalid,
    }
}

/// `{"answers": {"<question id>": {"answers": [...]}}}`; anything else is invalid.
pub(super) fn decode_user_answers(raw: &RawValue) -> ClientReply {
    match serde_json::from_str::<ToolRequestUserInputResponse>(raw.get()) {
        Ok(response) => ClientReply::UserAnswers(
            response
                .answers
                .into_iter()
                .map(|(id, answer)| (id, answer.answers))
                .collect(),
        ),
        Err(_) => ClientReply::Invalid,
    }
}

/// `{"decision": …}`; anything else is malformed and counts as a decline.
pub(super) fn decode_decision(raw: &RawValue) -> ClientReply {
    let Ok(response) = serde_json::from_str::<CommandExecutionRequestApprovalResponse>(raw.get())
    else {
        return ClientReply::Decision(CommandDecision::Decline);
    };
    let decision = match &response.decision {
        serde_json::Value::String(name) => match name.as_str() {
            "accept" => CommandDecision::Accept,
            "acceptForSession" => CommandDecision::AcceptForSession,
            "cancel" => CommandDecision::Cancel,
            _ => CommandDecision::Decline,
        },
        serde_json::Value::Object(map)
            if map.contains_key("acceptWithExecpolicyAmendment")
                || map.contains_key("applyNetworkPolicyAmendment") =>
        {
            CommandDecision::Accept
        }
        _ => CommandDecision::Decline,
    };
    ClientReply::Decision(decision)
}

pub(super) fn decode_tool_result(raw: &RawValue) -> ClientReply {
    match serde_json::from_str::<DynamicToolCallResponse>(raw.get()) {
        Ok(response) => ClientReply::ToolResult(ClientToolResult {
            content_items: response
                .content_items
                .into_iter()
                .map(convert::tool_content_in)
                .collect(),
            success: response.success,
        }),
        Err(_) => ClientReply::Invalid,
    }
}
